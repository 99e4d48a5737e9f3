// LMDB through its C library, as a peer for `fief bench` (Debian: liblmdb-dev).
#include <lmdb.h>
