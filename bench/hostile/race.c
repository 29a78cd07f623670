// Swaps PATH between a regular file (a hard link of REAL) and a symlink to TARGET as fast as it
// can, until killed: what another user who can write a model's folder does to its external data
// while someone else compiles the model (issue 46, P2). Each swap is one atomic rename.
//   race PATH REAL TARGET
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: race PATH REAL TARGET\n");
    return 2;
  }
  char spare[4096];
  snprintf(spare, sizeof(spare), "%s.spare", argv[1]);
  for (;;) {
    if (link(argv[2], spare) == 0) rename(spare, argv[1]);
    if (symlink(argv[3], spare) == 0) rename(spare, argv[1]);
  }
}
