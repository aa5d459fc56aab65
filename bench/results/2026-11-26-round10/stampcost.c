/* Cost of a call's stamps: rdtsc, lfence+rdtsc, rdtscp, clock_gettime. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
volatile uint64_t sink; volatile uint64_t mem[64];
int main(void){
  enum{N=20000000};
  for(int round=0;round<3;round++){
  double t0=now(); uint64_t s=0;
  for(int i=0;i<N;i++){ s+=mem[i&63]; s+=__rdtsc(); } sink=s; double a=(now()-t0)/N;
  t0=now(); s=0;
  for(int i=0;i<N;i++){ s+=mem[i&63]; _mm_lfence(); s+=__rdtsc(); } sink=s; double b=(now()-t0)/N;
  t0=now(); s=0; unsigned aux;
  for(int i=0;i<N;i++){ s+=mem[i&63]; s+=__rdtscp(&aux); } sink=s; double c=(now()-t0)/N;
  t0=now(); s=0; struct timespec ts;
  for(int i=0;i<N/4;i++){ s+=mem[i&63]; clock_gettime(CLOCK_MONOTONIC,&ts); s+=ts.tv_nsec; } sink=s; double d=(now()-t0)/(N/4);
  t0=now(); s=0;
  for(int i=0;i<N;i++){ s+=mem[i&63]; _mm_lfence(); s+=__rdtsc(); s+=mem[(i+7)&63]; s+=__rdtsc(); } sink=s; double e=(now()-t0)/N;
  t0=now(); s=0;
  for(int i=0;i<N;i++){ s+=mem[i&63]; s+=__rdtscp(&aux); s+=mem[(i+7)&63]; s+=__rdtsc(); } sink=s; double f=(now()-t0)/N;
  printf("ns: rdtsc %.1f  lfence+rdtsc %.1f  rdtscp %.1f  clock_gettime %.1f | a call's pair: lfence+rdtsc,rdtsc %.1f  rdtscp,rdtsc %.1f\n",a,b,c,d,e,f);
  }
}
