#include <stdio.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(){ volatile unsigned long x=0; double t0=now(); int n=0; double base=1e9;
 static double v[20000]; 
 while(now()-t0<30000){ double a=now(); for(unsigned long i=0;i<3000000;i++) x+=i*i; double d=now()-a; v[n++]=d; if(d<base)base=d; }
 int slow=0; for(int i=0;i<n;i++){ if(v[i]>1.5*base) slow++; }
 printf("n %d base %.2f ms slow %d\n",n,base,slow);
 // print compact timeline: one char per sample
 for(int i=0;i<n;i++){ putchar(v[i]>1.5*base?'#':'.'); } putchar('\n');
}
