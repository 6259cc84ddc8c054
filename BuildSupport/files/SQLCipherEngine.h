// The SQLCipher engine's C API, as shipped in SQLCipherKit's artifact bundle.
#ifndef SQLCIPHERENGINE_H
#define SQLCIPHERENGINE_H
// sqlite3.h declares sqlite3_key, sqlite3_key_v2, sqlite3_rekey and sqlite3_rekey_v2 only with this macro.
#ifndef SQLITE_HAS_CODEC
#define SQLITE_HAS_CODEC 1
#endif
#include "sqlite3.h"
#endif
