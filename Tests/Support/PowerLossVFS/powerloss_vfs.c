// The power-cut simulator (PowerLossVFS.h): a SQLite VFS shim for the reliability tests, never shipped.
//
// The model, per path:
// - A *record* is one incarnation of a file: the bytes it held at its last sync (`durable`) and every write and
//   truncation since (`writes`, in order). A sync folds the writes into `durable`. Reads and writes go to the real
//   file at once, as the kernel's page cache serves them, so the process sees its own writes.
// - The folder: which incarnation each path had when the folder was last synced (`in_synced_folder`), and every
//   creation and deletion since (`changes`, in order). SQLite syncs a folder in two places, and the shim follows
//   the unix VFS in both: xDelete with syncDir (a rollback journal deleted under synchronous=EXTRA), and the first
//   sync of a new rollback journal, super-journal or WAL file (unixOpen sets UNIXFILE_DIRSYNC for them). A new
//   main database file gets no folder sync from SQLite: the tests create theirs before the cuts begin.
// - A cut keeps, for the folder, a prefix of the changes (a journaling file system commits its metadata in
//   order), and for each surviving file its durable bytes plus, per write since: all of it, none of it, or a
//   random subset of its 512-byte sectors (a disk may persist any of the sectors it was sent, in any order);
//   a truncation is kept or not. Then the files are written out through plain system calls and the process
//   exits at once (_exit: no exit handler, no SQLite close runs).
// Every write, truncation, sync, file creation and deletion is one *event*; the cut comes before event `cut_at`
// takes effect. They, reads and sizes run under one mutex, so a cut on one thread leaves no other thread's write
// half done, nor lets one read a file the cut is rewriting.
// Temporary files without a name (SQLite deletes them at close, and a reboot loses them anyway) pass through.

#include "PowerLossVFS.h"

#include "../../../Vendor/build/include/sqlite3.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECTOR 512

typedef struct Write {
    sqlite3_int64 offset;   // for a truncation, the new size
    int length;             // -1 for a truncation
    unsigned char *data;
} Write;

typedef struct Record {
    char *path;
    unsigned char *durable;
    size_t durable_length;
    Write *writes;
    int write_count, write_capacity;
    int live;               // the path's current incarnation
    int in_synced_folder;   // the incarnation the folder held at its last sync
    int syncs_folder;       // a new journal or WAL file: its first sync also syncs the folder (unix VFS)
    int dead;               // deleted, and the deletion synced: it can never come back; its buffers are freed
    int survives;           // set while cutting
    struct Record *next;
} Record;

typedef struct Change {
    int creation;           // 1 created, 0 deleted
    Record *record;
} Change;

typedef struct PLFile {
    sqlite3_file base;
    Record *record;         // NULL for a temporary file
    sqlite3_file *real;     // the default VFS's file, allocated right after this struct
} PLFile;

static sqlite3_vfs *real_vfs;
static sqlite3_vfs shim_vfs;
static sqlite3_io_methods shim_methods[4];  // by the real file's iVersion (1…3)
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static Record *records;
static Change *changes;
static int change_count, change_capacity;
static long long events, cut_at;
static int policy;
static uint64_t random_state;

// ------------------------------------------------------------------------------------------------ helpers ---

static uint64_t next_random(void) {  // splitmix64
    uint64_t z = (random_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void out_of_memory(void) {
    static const char message[] = "PowerLossVFS: out of memory\n";
    (void)!write(2, message, sizeof message - 1);
    _exit(70);
}

static void *must_allocate(size_t size) {
    void *memory = malloc(size ? size : 1);
    if (!memory) out_of_memory();
    return memory;
}

static void *must_reallocate(void *memory, size_t size) {
    void *grown = realloc(memory, size ? size : 1);
    if (!grown) out_of_memory();
    return grown;
}

// The whole content of the file at `path` (a new buffer), or 0 bytes if it cannot be read.
static unsigned char *read_whole(const char *path, size_t *length) {
    *length = 0;
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return must_allocate(0);
    struct stat status;
    if (fstat(descriptor, &status) != 0) { close(descriptor); return must_allocate(0); }
    unsigned char *bytes = must_allocate((size_t)status.st_size);
    size_t done = 0;
    while (done < (size_t)status.st_size) {
        ssize_t got = pread(descriptor, bytes + done, (size_t)status.st_size - done, (off_t)done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        done += (size_t)got;
    }
    close(descriptor);
    *length = done;
    return bytes;
}

// Applies `write` (all of it, or the sectors `keep` says) to the image `*bytes` of `*length` bytes.
static void apply_write(unsigned char **bytes, size_t *length, const Write *write, int tear) {
    if (write->length < 0) {
        size_t size = (size_t)write->offset;
        if (size > *length) {
            *bytes = must_reallocate(*bytes, size);
            memset(*bytes + *length, 0, size - *length);
        }
        *length = size;
        return;
    }
    size_t start = (size_t)write->offset, end = start + (size_t)write->length;
    for (size_t chunk = start; chunk < end;) {
        size_t chunk_end = (chunk / SECTOR + 1) * SECTOR;
        if (chunk_end > end) chunk_end = end;
        if (!tear || (next_random() & 1)) {
            if (chunk_end > *length) {
                *bytes = must_reallocate(*bytes, chunk_end);
                memset(*bytes + *length, 0, chunk_end - *length);
                *length = chunk_end;
            }
            memcpy(*bytes + chunk, write->data + (chunk - start), chunk_end - chunk);
        }
        chunk = chunk_end;
    }
}

static void free_writes(Record *record) {
    for (int index = 0; index < record->write_count; index++) free(record->writes[index].data);
    record->write_count = 0;
}

// A sync of the record's file: what was written is now on the disk.
static void fold_writes(Record *record) {
    for (int index = 0; index < record->write_count; index++) {
        apply_write(&record->durable, &record->durable_length, &record->writes[index], 0);
    }
    free_writes(record);
}

static void append_write(Record *record, sqlite3_int64 offset, int length, const void *data) {
    if (record->dead) return;
    if (record->write_count == record->write_capacity) {
        record->write_capacity = record->write_capacity ? record->write_capacity * 2 : 16;
        record->writes = must_reallocate(record->writes, sizeof(Write) * (size_t)record->write_capacity);
    }
    Write *write = &record->writes[record->write_count++];
    write->offset = offset;
    write->length = length;
    write->data = NULL;
    if (length > 0) {
        write->data = must_allocate((size_t)length);
        memcpy(write->data, data, (size_t)length);
    }
}

static void append_change(int creation, Record *record) {
    if (change_count == change_capacity) {
        change_capacity = change_capacity ? change_capacity * 2 : 16;
        changes = must_reallocate(changes, sizeof(Change) * (size_t)change_capacity);
    }
    changes[change_count].creation = creation;
    changes[change_count].record = record;
    change_count++;
}

static Record *new_record(const char *path, unsigned char *durable, size_t length, int in_synced_folder) {
    Record *record = must_allocate(sizeof(Record));
    memset(record, 0, sizeof(Record));
    record->path = must_allocate(strlen(path) + 1);
    strcpy(record->path, path);
    record->durable = durable;
    record->durable_length = length;
    record->live = 1;
    record->in_synced_folder = in_synced_folder;
    record->next = records;
    records = record;
    return record;
}

static Record *live_record(const char *path) {
    for (Record *record = records; record; record = record->next) {
        if (record->live && strcmp(record->path, path) == 0) return record;
    }
    return NULL;
}

// The folder was synced: its entries as they are now survive any cut.
static void folder_synced(void) {
    change_count = 0;
    for (Record *record = records; record; record = record->next) {
        record->in_synced_folder = record->live;
        if (!record->live && !record->dead) {
            record->dead = 1;
            free_writes(record);
            free(record->durable);
            record->durable = NULL;
            record->durable_length = 0;
        }
    }
}

// ----------------------------------------------------------------------------------------------- the cut ---

static void write_out(const char *path, const unsigned char *bytes, size_t length) {
    int descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (descriptor < 0) return;
    size_t done = 0;
    while (done < length) {
        ssize_t wrote = pwrite(descriptor, bytes + done, length - done, (off_t)done);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) break;
        done += (size_t)wrote;
    }
    close(descriptor);
}

// Called with the mutex held; never returns.
static void cut(void) {
    int kept_changes = policy == POWERLOSS_DROP_ALL ? 0
        : policy == POWERLOSS_KEEP_ALL ? change_count : (int)(next_random() % (uint64_t)(change_count + 1));
    for (Record *record = records; record; record = record->next) record->survives = record->in_synced_folder;
    for (int index = 0; index < kept_changes; index++) changes[index].record->survives = changes[index].creation;

    long long writes_kept = 0, writes_dropped = 0, writes_torn = 0;
    for (Record *record = records; record; record = record->next) {
        if (record->dead || !record->survives) continue;
        // Renamed away by the process (a backup's temporary file moved into place): renames are outside a VFS,
        // and so outside this model; the file stays where and as the process left it.
        if (record->live && access(record->path, F_OK) != 0) continue;
        size_t length = record->durable_length;
        unsigned char *image = must_allocate(length);
        memcpy(image, record->durable, length);
        for (int index = 0; index < record->write_count; index++) {
            int choice = policy == POWERLOSS_DROP_ALL ? 1 : policy == POWERLOSS_KEEP_ALL ? 0 : (int)(next_random() % 3);
            if (choice == 1) { writes_dropped++; continue; }
            if (choice == 2 && record->writes[index].length < 0) { writes_dropped++; continue; }
            if (choice == 2) writes_torn++; else writes_kept++;
            apply_write(&image, &length, &record->writes[index], choice == 2);
        }
        write_out(record->path, image, length);
        free(image);
    }
    // A path whose surviving incarnation is none: gone (a creation undone, or a deletion kept).
    for (Record *record = records; record; record = record->next) {
        if (record->survives) continue;
        int other = 0;
        for (Record *candidate = records; candidate; candidate = candidate->next) {
            if (candidate->survives && !candidate->dead && strcmp(candidate->path, record->path) == 0) other = 1;
        }
        if (!other) unlink(record->path);
    }
    char line[256];
    int length = snprintf(line, sizeof line,
                          "power cut at event %lld (folder changes kept %d of %d; writes kept %lld, torn %lld, "
                          "dropped %lld)\n", events, kept_changes, change_count, writes_kept, writes_torn,
                          writes_dropped);
    if (length > 0) (void)!write(1, line, (size_t)length);
    _exit(0);
}

// One event; the cut comes before it when it is the chosen one. Called with the mutex held.
static void event(void) {
    events++;
    if (cut_at > 0 && events == cut_at) cut();
}

// ------------------------------------------------------------------------------------------ file methods ---

static int pl_close(sqlite3_file *file) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods ? pl->real->pMethods->xClose(pl->real) : SQLITE_OK;
}

// Reads and sizes take the mutex too: a cut rewrites the files, and a read in another thread must not see one
// half rewritten (it would fail, and end the process before the cut's own exit).
static int pl_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    PLFile *pl = (PLFile *)file;
    pthread_mutex_lock(&mutex);
    int rc = pl->real->pMethods->xRead(pl->real, buffer, amount, offset);
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int pl_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    PLFile *pl = (PLFile *)file;
    pthread_mutex_lock(&mutex);
    if (pl->record) event();
    int rc = pl->real->pMethods->xWrite(pl->real, buffer, amount, offset);
    if (rc == SQLITE_OK && pl->record) append_write(pl->record, offset, amount, buffer);
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int pl_truncate(sqlite3_file *file, sqlite3_int64 size) {
    PLFile *pl = (PLFile *)file;
    pthread_mutex_lock(&mutex);
    if (pl->record) event();
    int rc = pl->real->pMethods->xTruncate(pl->real, size);
    if (rc == SQLITE_OK && pl->record) append_write(pl->record, size, -1, NULL);
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int pl_sync(sqlite3_file *file, int flags) {
    PLFile *pl = (PLFile *)file;
    pthread_mutex_lock(&mutex);
    if (pl->record) event();
    int rc = pl->real->pMethods->xSync(pl->real, flags);
    if (rc == SQLITE_OK && pl->record && !pl->record->dead) {
        fold_writes(pl->record);
        if (pl->record->syncs_folder) {
            pl->record->syncs_folder = 0;
            folder_synced();
        }
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int pl_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    PLFile *pl = (PLFile *)file;
    pthread_mutex_lock(&mutex);
    int rc = pl->real->pMethods->xFileSize(pl->real, size);
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int pl_lock(sqlite3_file *file, int level) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xLock(pl->real, level);
}

static int pl_unlock(sqlite3_file *file, int level) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xUnlock(pl->real, level);
}

static int pl_check_reserved_lock(sqlite3_file *file, int *out) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xCheckReservedLock(pl->real, out);
}

static int pl_file_control(sqlite3_file *file, int operation, void *argument) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xFileControl(pl->real, operation, argument);
}

static int pl_sector_size(sqlite3_file *file) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xSectorSize(pl->real);
}

static int pl_device_characteristics(sqlite3_file *file) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xDeviceCharacteristics(pl->real);
}

// The WAL index (-shm) is memory the unix VFS maps itself; after a reboot SQLite rebuilds it from the WAL (the
// first connection truncates it), so it passes through.
static int pl_shm_map(sqlite3_file *file, int page, int size, int extend, void volatile **memory) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xShmMap(pl->real, page, size, extend, memory);
}

static int pl_shm_lock(sqlite3_file *file, int offset, int count, int flags) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xShmLock(pl->real, offset, count, flags);
}

static void pl_shm_barrier(sqlite3_file *file) {
    PLFile *pl = (PLFile *)file;
    pl->real->pMethods->xShmBarrier(pl->real);
}

static int pl_shm_unmap(sqlite3_file *file, int delete_flag) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xShmUnmap(pl->real, delete_flag);
}

static int pl_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xFetch(pl->real, offset, amount, pointer);
}

static int pl_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    PLFile *pl = (PLFile *)file;
    return pl->real->pMethods->xUnfetch(pl->real, offset, pointer);
}

// ------------------------------------------------------------------------------------------- VFS methods ---

static int pl_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    PLFile *pl = (PLFile *)file;
    memset(pl, 0, sizeof(PLFile));
    pl->real = (sqlite3_file *)(pl + 1);
    if (!name) {
        int rc = real_vfs->xOpen(real_vfs, name, pl->real, flags, out_flags);
        if (rc == SQLITE_OK && pl->real->pMethods) pl->base.pMethods = &shim_methods[pl->real->pMethods->iVersion];
        return rc;
    }
    pthread_mutex_lock(&mutex);
    int existed = access(name, F_OK) == 0;
    if (!existed && (flags & SQLITE_OPEN_CREATE)) event();
    int rc = real_vfs->xOpen(real_vfs, name, pl->real, flags, out_flags);
    if (rc == SQLITE_OK) {
        Record *record = live_record(name);
        if (!record && existed) {
            size_t length;
            unsigned char *bytes = read_whole(name, &length);
            record = new_record(name, bytes, length, 1);
        } else if (!record) {
            record = new_record(name, must_allocate(0), 0, 0);
            record->syncs_folder = (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL | SQLITE_OPEN_SUPER_JOURNAL)) != 0;
            append_change(1, record);
        }
        pl->record = record;
        if (pl->real->pMethods) pl->base.pMethods = &shim_methods[pl->real->pMethods->iVersion];
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int pl_delete(sqlite3_vfs *vfs, const char *name, int sync_folder) {
    (void)vfs;
    pthread_mutex_lock(&mutex);
    event();
    Record *record = live_record(name);
    if (!record && access(name, F_OK) == 0) {
        size_t length;
        unsigned char *bytes = read_whole(name, &length);
        record = new_record(name, bytes, length, 1);
    }
    int rc = real_vfs->xDelete(real_vfs, name, sync_folder);
    if (rc == SQLITE_OK && record) {
        record->live = 0;
        append_change(0, record);
    }
    if (rc == SQLITE_OK && sync_folder) folder_synced();
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int pl_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int pl_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return real_vfs->xFullPathname(real_vfs, name, size, out);
}

static void *pl_dl_open(sqlite3_vfs *vfs, const char *name) { (void)vfs; return real_vfs->xDlOpen(real_vfs, name); }
static void pl_dl_error(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; real_vfs->xDlError(real_vfs, size, out); }
static void (*pl_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return real_vfs->xDlSym(real_vfs, handle, symbol);
}
static void pl_dl_close(sqlite3_vfs *vfs, void *handle) { (void)vfs; real_vfs->xDlClose(real_vfs, handle); }
static int pl_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return real_vfs->xRandomness(real_vfs, size, out);
}
static int pl_sleep(sqlite3_vfs *vfs, int microseconds) { (void)vfs; return real_vfs->xSleep(real_vfs, microseconds); }
static int pl_current_time(sqlite3_vfs *vfs, double *out) { (void)vfs; return real_vfs->xCurrentTime(real_vfs, out); }
static int pl_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, size, out) : 0;
}
static int pl_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

// -------------------------------------------------------------------------------------------- public API ---

int powerloss_install(unsigned long long seed, int cut_policy) {
    if (real_vfs) return SQLITE_MISUSE;
    int rc = sqlite3_initialize();
    if (rc != SQLITE_OK) return rc;
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs || real_vfs->iVersion < 2) return SQLITE_ERROR;
    random_state = seed;
    policy = cut_policy;
    for (int version = 1; version <= 3; version++) {
        sqlite3_io_methods *methods = &shim_methods[version];
        methods->iVersion = version;
        methods->xClose = pl_close;
        methods->xRead = pl_read;
        methods->xWrite = pl_write;
        methods->xTruncate = pl_truncate;
        methods->xSync = pl_sync;
        methods->xFileSize = pl_file_size;
        methods->xLock = pl_lock;
        methods->xUnlock = pl_unlock;
        methods->xCheckReservedLock = pl_check_reserved_lock;
        methods->xFileControl = pl_file_control;
        methods->xSectorSize = pl_sector_size;
        methods->xDeviceCharacteristics = pl_device_characteristics;
        if (version >= 2) {
            methods->xShmMap = pl_shm_map;
            methods->xShmLock = pl_shm_lock;
            methods->xShmBarrier = pl_shm_barrier;
            methods->xShmUnmap = pl_shm_unmap;
        }
        if (version >= 3) {
            methods->xFetch = pl_fetch;
            methods->xUnfetch = pl_unfetch;
        }
    }
    shim_vfs.iVersion = 2;
    shim_vfs.szOsFile = (int)sizeof(PLFile) + real_vfs->szOsFile;
    shim_vfs.mxPathname = real_vfs->mxPathname;
    shim_vfs.zName = "powerloss";
    shim_vfs.xOpen = pl_open;
    shim_vfs.xDelete = pl_delete;
    shim_vfs.xAccess = pl_access;
    shim_vfs.xFullPathname = pl_full_pathname;
    shim_vfs.xDlOpen = pl_dl_open;
    shim_vfs.xDlError = pl_dl_error;
    shim_vfs.xDlSym = pl_dl_sym;
    shim_vfs.xDlClose = pl_dl_close;
    shim_vfs.xRandomness = pl_randomness;
    shim_vfs.xSleep = pl_sleep;
    shim_vfs.xCurrentTime = pl_current_time;
    shim_vfs.xGetLastError = pl_get_last_error;
    shim_vfs.xCurrentTimeInt64 = pl_current_time_int64;
    return sqlite3_vfs_register(&shim_vfs, 1);
}

void powerloss_arm(long long cut) {
    pthread_mutex_lock(&mutex);
    for (Record *record = records; record; record = record->next) {
        if (!record->dead) fold_writes(record);
    }
    folder_synced();
    events = 0;
    cut_at = cut;
    pthread_mutex_unlock(&mutex);
}

long long powerloss_events(void) {
    pthread_mutex_lock(&mutex);
    long long count = events;
    pthread_mutex_unlock(&mutex);
    return count;
}

void powerloss_cut_now(void) {
    pthread_mutex_lock(&mutex);
    cut();
}
