import CSQLCipher
import Glibc

/// Keeps key material out of core dumps, for services and tools that hold keys.
///
/// A core dump holds whatever the process's memory held when it crashed: passphrases and raw keys in their
/// buffers, and SQLCipher's derived keys. SQLCipherKit's own key storage is always excluded from cores
/// (`MADV_DONTDUMP`), but key material also passes through buffers that are not its own (a key file read, a
/// string, SQLCipher's allocations). ``disable()`` makes the whole process non-dumpable, as ssh-agent and gpg-agent
/// do: call it first thing, before reading any key. The `sqlcipherkit` tool does.
///
/// In a systemd unit, `LimitCORE=0` does the same from outside.
public enum CoreDumps {
    /// Makes this process write no core file, whatever the resource limit and `core_pattern` say:
    /// [`prctl(PR_SET_DUMPABLE, 0)`](https://man7.org/linux/man-pages/man2/pr_set_dumpable.2const.html) (which
    /// also keeps other processes of the same user from reading its memory through `/proc` or `ptrace`) and a
    /// core size limit of 0. Lasts until the process ends; `execve` of a program that is not set-user-ID makes
    /// the new program dumpable again.
    ///
    /// - Throws: ``SQLCipherError/Kind/ioError`` when the system refuses (not expected on Linux).
    public static func disable() throws(SQLCipherError) {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        guard sqlcipherkit_set_dumpable(0) == 0, setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 else {
            throw .api(.ioError, "could not turn core dumps off (prctl or setrlimit failed: errno \(errno))",
                       path: "")
        }
    }

    /// Whether this process is non-dumpable (``disable()`` was called, or the system made it so).
    public static var areDisabled: Bool {
        sqlcipherkit_get_dumpable() == 0
    }
}
