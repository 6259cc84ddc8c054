// A power-cut simulator for the reliability tests (never shipped): a SQLite VFS over the default one that keeps,
// for every file, what was on the disk at its last sync and what was written since, and, for the folder, the
// files created and deleted since the folder was last synced. At a chosen I/O event it "cuts the power": each
// file is put back to its synced state plus some of the writes since (whole, dropped, or torn in 512-byte
// sectors, in any combination), the folder to its synced state plus a prefix of the changes since, and the
// process exits at once. See powerloss_vfs.c for the model.
#ifndef POWERLOSS_VFS_H
#define POWERLOSS_VFS_H

#ifdef __cplusplus
extern "C" {
#endif

/// What a cut keeps of the writes since each file's last sync.
enum powerloss_policy {
    /// Each write kept whole, dropped, or torn (a random subset of its 512-byte sectors), at random.
    POWERLOSS_RANDOM = 0,
    /// Every unsynced write dropped, every unsynced folder change undone.
    POWERLOSS_DROP_ALL = 1,
    /// Every unsynced write and folder change kept (a process crash, not a power cut: the control).
    POWERLOSS_KEEP_ALL = 2,
};

/// Registers the VFS "powerloss" over the default VFS and makes it the default, so every connection the process
/// opens from now on goes through it; nothing is cut until ``powerloss_arm``. `seed` decides what a random cut
/// keeps. Returns 0, or an SQLite error code. Call once, before the first open.
int powerloss_install(unsigned long long seed, int policy);

/// Counts every file and folder state as synced (what is on the disk now survives any cut: the set-up before),
/// starts counting events from 0, and cuts the power before event `cut_at` (1-based: a write, truncation, sync,
/// file creation or deletion); 0 never cuts.
void powerloss_arm(long long cut_at);

/// The I/O events counted so far.
long long powerloss_events(void);

/// Cuts the power now (as at an event), writes "power cut at event N (…)" to standard output and exits with
/// status 0 without running any exit handler.
void powerloss_cut_now(void);

#ifdef __cplusplus
}
#endif

#endif
