#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static long rss_kb(void){FILE*f=fopen("/proc/self/statm","r");long a,b;fscanf(f,"%ld %ld",&a,&b);fclose(f);return b*4;}
int main(int argc,char**argv){
  const char*mode=argv[1]; int n=atoi(argv[2]); size_t size=(size_t)atol(argv[3]);
  unlink("/tmp/exp/z.db"); unlink("/tmp/exp/z.db-journal");
  sqlite3*db; sqlite3_open("/tmp/exp/z.db",&db);
  sqlite3_exec(db,"PRAGMA page_size=16384; PRAGMA synchronous=OFF; PRAGMA journal_mode=TRUNCATE; CREATE TABLE blobs(hash BLOB PRIMARY KEY, size INTEGER, content BLOB);",0,0,0);
  if(getenv("MMAP")) sqlite3_exec(db,"PRAGMA mmap_size=268435456",0,0,0);
  if(!strcmp(mode,"spill")) { char q[100]; snprintf(q,sizeof q,"PRAGMA cache_spill=%d",atoi(argv[4])); sqlite3_exec(db,q,0,0,0);}
  unsigned char*buf=malloc(size); for(size_t i=0;i<size;i++) buf[i]=(unsigned char)(i*2654435761u>>13);
  sqlite3_stmt*s; 
  int zb = strcmp(mode,"bind")!=0;
  sqlite3_prepare_v2(db, zb? "INSERT INTO blobs VALUES(?,?,zeroblob(?))":"INSERT INTO blobs VALUES(?,?,?)",-1,&s,0);
  double t0=now();
  sqlite3_exec(db,"BEGIN",0,0,0);
  for(int k=0;k<n;k++){
    unsigned char key[16]={0}; key[0]=k+1;
    sqlite3_bind_blob(s,1,key,16,SQLITE_TRANSIENT); sqlite3_bind_int64(s,2,size);
    if(zb) sqlite3_bind_int64(s,3,size); else sqlite3_bind_blob64(s,3,buf,size,SQLITE_STATIC);
    if(sqlite3_step(s)!=SQLITE_DONE) {printf("err %s\n",sqlite3_errmsg(db));return 1;}
    sqlite3_reset(s);
    if(zb){ sqlite3_blob*b=0;
      if(sqlite3_blob_open(db,"main","blobs","content",sqlite3_last_insert_rowid(db),1,&b)!=SQLITE_OK||sqlite3_blob_write(b,buf,(int)size,0)!=SQLITE_OK){printf("blob err %s\n",sqlite3_errmsg(db));return 1;}
      sqlite3_blob_close(b);}
  }
  double t1=now();
  long r1=rss_kb();
  sqlite3_exec(db,"COMMIT",0,0,0);
  double t2=now();
  printf("%s: insert %.1f ms, commit %.1f ms, total %.1f; rss before commit %ld MB, after %ld MB\n",mode,t1-t0,t2-t1,t2-t0,r1/1024,rss_kb()/1024);
  return 0;
}
