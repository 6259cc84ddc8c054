// The C baseline against the system's SQLite (libsqlite3-dev's header and library): the engine GRDB runs on.
#include <sqlite3.h>
#include "CRawSystemSQLite.h"

#define RAW(name) rawsystem_##name
#include "../RawLoops/raw_loops.inc"
