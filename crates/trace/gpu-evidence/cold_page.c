// How much a cold page costs a load on this machine (#32: whether huge pages would make a cold
// call cheaper): a dependent chain of K loads, one line in each of K distinct 4 KiB pages of an
// ordinary mapping, or K lines in distinct 4 KiB parts of one 2 MiB region advised
// MADV_HUGEPAGE, after the thread swept `sweep` MiB (its TLB and caches cold), and the same chain
// again at once (warm). Prints medians, ns per load. Usage: cold_page [sweep MiB=16]
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <sys/mman.h>
#include <x86intrin.h>
static double tsc_ns;
static uint64_t ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000ull+t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static void** chain(char* base, int k, size_t stride, size_t off){
  for(int i=0;i<k;i++){ void** p=(void**)(base+i*stride+off); *p = (i+1<k)? (void*)(base+(i+1)*stride+off):NULL; }
  return (void**)(base+off);
}
static double walk(void** p){ uint64_t a=__rdtsc(); _mm_lfence(); while(p) p=(void**)*p; _mm_lfence(); return (__rdtsc()-a)*tsc_ns; }
int main(int argc,char**argv){
  int k=16, reps=200; size_t sweep=(argc>1?atoi(argv[1]):16)<<20;
  uint64_t t0=ns(),c0=__rdtsc(); struct timespec s={0,50000000}; nanosleep(&s,0); tsc_ns=(double)(ns()-t0)/(__rdtsc()-c0);
  char* small=mmap(0,k*8192,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  char* raw=mmap(0,4<<20,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  char* huge=(char*)(((uintptr_t)raw+(2<<20)-1)&~(uintptr_t)((2<<20)-1));
  int adv=madvise(huge,2<<20,MADV_HUGEPAGE); memset(huge,1,2<<20);
  char* big=malloc(sweep);
  double c4[200],w4[200],ch[200],wh[200];
  for(int r=0;r<reps;r++){
    size_t off=(r*64*7)%4032;
    void** a=chain(small,k,8192,off); void** h=chain(huge,k,8192*3,off);
    memset(big,r,sweep); c4[r]=walk(a)/k; w4[r]=walk(a)/k;
    memset(big,r+1,sweep); ch[r]=walk(h)/k; wh[r]=walk(h)/k;
  }
  qsort(c4,reps,8,cmp);qsort(w4,reps,8,cmp);qsort(ch,reps,8,cmp);qsort(wh,reps,8,cmp);
  FILE* f=fopen("/sys/kernel/mm/transparent_hugepage/enabled","r"); char thp[128]={0}; if(f){fgets(thp,127,f);fclose(f);}
  char line[256]; long anon_huge=-1; f=fopen("/proc/self/smaps_rollup","r"); while(f&&fgets(line,256,f)) if(!strncmp(line,"AnonHugePages:",14)) anon_huge=atol(line+14); if(f)fclose(f);
  printf("sweep %zu MiB: cold 4KiB pages %.0f ns a load, warm %.0f; cold lines of one 2MiB region %.0f, warm %.0f (madvise %d, AnonHugePages %ld kB, thp %s)",
    sweep>>20, c4[reps/2], w4[reps/2], ch[reps/2], wh[reps/2], adv, anon_huge, thp);
  return 0;
}
