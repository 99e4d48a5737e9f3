// SQLite through its C library, as a peer for `fief bench` (Debian: libsqlite3-dev).
#include <sqlite3.h>
