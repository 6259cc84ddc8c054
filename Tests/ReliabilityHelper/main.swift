// A test helper, not a product: the child process the tests in Tests/SQLCipherKitTests/Reliability kill, starve
// of disk space or inspect. Each subcommand reports progress as lines on standard output, written unbuffered,
// so that a line the parent has read is a fact about the past, however abruptly the child dies afterwards.
//
// Keys come from the environment (RELIABILITY_KEY_HEX, RELIABILITY_NEW_KEY_HEX), never from the command line.
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    fail(usage: "usage: ReliabilityHelper write|rekey|disk-full|group-commit-full|at-rest|memory-scan|concurrent-writer|counter-writer|guard-spellings|first-opens|power-loss|sanitizer-control|process-state-control|route-controls ARGUMENTS")
}
let rest = Array(arguments.dropFirst())

switch command {
case "write": WriteLoop.run(rest)
case "rekey": RekeyRun.run(rest)
case "disk-full": DiskFull.run(rest)
case "group-commit-full": GroupCommitFull.run(rest)
case "at-rest": AtRest.run(rest)
case "memory-scan": MemoryScan.run(rest)
case "concurrent-writer": ConcurrentWriter.run(rest)
case "counter-writer": CounterWriter.run(rest)
case "guard-spellings": GuardSpellings.run(rest)
case "first-opens": FirstOpens.run(rest)
case "power-loss": PowerLoss.run(rest)
case "sanitizer-control": SanitizerControl.run(rest)
case "process-state-control": ProcessStateControl.run(rest)
case "route-controls": RouteControls.run(rest)
default: fail(usage: "unknown subcommand \(command)")
}
