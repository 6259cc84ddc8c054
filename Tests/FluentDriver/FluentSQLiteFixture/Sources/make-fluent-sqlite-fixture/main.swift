import FluentKit
import FluentSQLiteDriver
import Foundation
import Logging
import NIOPosix

// Writes CompatibilityFixture's rows with fluent-sqlite-driver into the plain SQLite file at the first argument
// (which must not exist yet), then prints what they read back as through fluent-sqlite-driver (JSON).
let arguments = CommandLine.arguments
guard arguments.count == 2, !FileManager.default.fileExists(atPath: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: make-fluent-sqlite-fixture NEW-FILE\n".utf8))
    exit(64)
}
let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
databases.use(.sqlite(.file(arguments[1])), as: .sqlite)
guard let database = databases.database(.sqlite, logger: Logger(label: "fixture"),
                                        on: MultiThreadedEventLoopGroup.singleton.any()) else {
    FileHandle.standardError.write(Data("no database\n".utf8))
    exit(1)
}
do {
    try await CompatibilityFixture.write(on: database)
    print(try await CompatibilityFixture.read(on: database))
    await databases.shutdownAsync()
} catch {
    FileHandle.standardError.write(Data("make-fluent-sqlite-fixture: \(error)\n".utf8))
    await databases.shutdownAsync()
    exit(1)
}
