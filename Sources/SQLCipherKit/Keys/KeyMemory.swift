/// The one wipe of the codebase, for the key buffers of the `sqlcipherkit` tool (same package): overwrites
/// bytes with zeros through ``SecureBytes``' `explicit_bzero`, which the optimiser may not drop.
package enum KeyMemory {
    /// Overwrites `buffer` with zeros.
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        SecureBytes.wipe(buffer)
    }

    /// Overwrites the bytes of `bytes` with zeros, then empties it.
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { SecureBytes.wipe($0) }
        bytes.removeAll()
    }
}
