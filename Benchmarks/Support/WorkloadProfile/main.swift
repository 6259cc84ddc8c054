// Runs one variant of one SQLCipherKit-process workload once, for instruction counts that do not depend on the
// machine's load. Only the measured part is counted with:
//
//   valgrind --tool=callgrind --toggle-collect='*SideBySide.time*' \
//       Benchmarks/.build/release/WorkloadProfile <workload> <variant>
//
// workload: 1 bulk insert … 4 single-row transactions, by number; variant: encrypted, plain, raw C encrypted,
// raw C plain, encrypted, array arguments, plain, array arguments. Set-up (fresh files, fixtures, opening) runs outside SideBySide.time and is not counted.
import BenchmarkSupport
import Foundation
import SQLCipherKitWorkloads

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let number = Int(arguments.first ?? ""), (1...Workload.allCases.count).contains(number)
else {
    FileHandle.standardError.write(Data("usage: WorkloadProfile <1-4> <encrypted|plain|raw C encrypted|raw C plain|encrypted, array arguments|plain, array arguments>\n".utf8))
    exit(64)
}
let workload = Workload.allCases[number - 1]
let process = BenchmarkProcess()
let variants = Variants(process: process).profiled(workload)
guard let variant = variants.first(where: { $0.metric.description == arguments.last }) else {
    FileHandle.standardError.write(Data("no variant named \(arguments.last ?? "")\n".utf8))
    exit(64)
}
do {
    let elapsed = try variant.run()
    process.finish()
    print("\(workload.rawValue), \(variant.metric.description): \(elapsed)")
} catch {
    process.finish()
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
