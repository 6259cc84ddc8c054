import ArgumentParser

/// The key options of every command that opens a database.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-env"), help: ArgumentHelp("Read the key from this environment variable.",
                                                             valueName: "NAME"))
    var environmentVariable: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("Read the key from this file (its bytes minus one trailing newline); it must be owned by this user and closed to group and others (chmod 600).", valueName: "PATH"))
    var file: String?

    @Option(name: .customLong("key-credential"), help: ArgumentHelp("Read the key from the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME, from LoadCredential= or LoadCredentialEncrypted=).", valueName: "NAME"))
    var credential: String?

    @Option(name: .customLong("key-command"), help: ArgumentHelp("Run COMMAND with /bin/sh -c and read the key from its standard output; it must exit 0 (its stderr is shown).", valueName: "COMMAND"))
    var command: String?

    @Option(name: .customLong("key-command-timeout"), help: ArgumentHelp("Seconds --key-command may take before it is killed.", valueName: "SECONDS"))
    var commandTimeout = KeySource.defaultCommandTimeout

    @Flag(name: .customLong("key-stdin"), help: "Read the key from standard input.")
    var standardInput = false

    @Flag(name: .customLong("raw"), help: "The key is hex: 64 digits for a raw key, 96 for a raw key and its salt.")
    var raw = false

    /// `--key`, `--password`, `-k`: not a key source but a refusal that names the ones that work (without it,
    /// ArgumentParser answered `--key secret` with "Did you mean '--raw'?").
    @Option(name: [.customLong("key"), .customLong("password"), .customShort("k")], help: .hidden)
    var keyOnCommandLine: String?

    var source: KeySource {
        KeySource(environmentVariable: environmentVariable, file: file, credential: credential, command: command,
                  commandTimeout: commandTimeout, standardInput: standardInput, raw: raw)
    }

    func validate() throws {
        guard keyOnCommandLine == nil else { throw ValidationError(KeySource.noKeyArguments(flagPrefix: "")) }
        try source.validate(flagPrefix: "")
    }
}
