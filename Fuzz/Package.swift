// swift-tools-version: 6.0
// chime's fuzz targets under libFuzzer and AddressSanitizer: `make fuzz` builds this package with
// `-sanitize=fuzzer,address` (one flag: SwiftPM would pass two -sanitize= flags in no fixed order,
// and the driver keeps the last) and runs each target from its corpus in corpus/.
import PackageDescription

let package = Package(
    name: "chime-fuzz",
    dependencies: [.package(name: "chime", path: "..")],
    targets: [
        .executableTarget(name: "chime-fuzz", dependencies: [.product(name: "FuzzTargets", package: "chime")],
                          swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ]
)
