import Foundation
import Notifications
import Testing
import TestSupport

/// PNG decoding checked against files written by an independent encoder (pypng).
@Suite struct ImageDataTests {
    /// Writes one PNG per case with pypng, and the pixels we must decode it to.
    static let script = #"""
    import png, sys, os
    out = sys.argv[1]
    W, H = 7, 5
    def px(x, y, c): return (x * 37 + y * 59 + c * 83) % 256
    cases = []
    rgba = [[px(x, y, c) for x in range(W) for c in range(4)] for y in range(H)]
    cases.append(("rgba8", dict(greyscale=False, alpha=True, bitdepth=8), rgba, [r for r in rgba], True))
    rgb = [[px(x, y, c) for x in range(W) for c in range(3)] for y in range(H)]
    cases.append(("rgb8", dict(greyscale=False, alpha=False, bitdepth=8), rgb, rgb, False))
    cases.append(("rgb8-interlaced", dict(greyscale=False, alpha=False, bitdepth=8, interlace=True), rgb, rgb, False))
    rgb16 = [[px(x, y, c) * 257 + 3 for x in range(W) for c in range(3)] for y in range(H)]
    cases.append(("rgb16", dict(greyscale=False, alpha=False, bitdepth=16), rgb16, [[v >> 8 for v in r] for r in rgb16], False))
    grey = [[px(x, y, 0) for x in range(W)] for y in range(H)]
    cases.append(("grey8", dict(greyscale=True, alpha=False, bitdepth=8), grey, [[v for v in r for _ in range(3)] for r in grey], False))
    grey1 = [[(x + y) % 2 for x in range(W)] for y in range(H)]
    cases.append(("grey1", dict(greyscale=True, alpha=False, bitdepth=1), grey1, [[v * 255 for v in r for _ in range(3)] for r in grey1], False))
    grey4 = [[(x * 3 + y) % 16 for x in range(W)] for y in range(H)]
    cases.append(("grey4-interlaced", dict(greyscale=True, alpha=False, bitdepth=4, interlace=True), grey4,
                  [[v * 17 for v in r for _ in range(3)] for r in grey4], False))
    ga = [[px(x, y, c) for x in range(W) for c in range(2)] for y in range(H)]
    cases.append(("greyalpha8", dict(greyscale=True, alpha=True, bitdepth=8), ga,
                  [[v for x in range(W) for v in (r[2*x], r[2*x], r[2*x], r[2*x+1])] for r in ga], True))
    palette = [(10, 20, 30, 255), (200, 100, 0, 128), (0, 255, 0, 0), (1, 2, 3, 4)]
    idx = [[(x + 2 * y) % 4 for x in range(W)] for y in range(H)]
    cases.append(("palette2", dict(palette=palette, bitdepth=2), idx,
                  [[v for i in r for v in palette[i]] for r in idx], True))
    for name, options, rows, expected, alpha in cases:
        with open(os.path.join(out, name + ".png"), "wb") as f:
            png.Writer(W, H, **options).write(f, rows)
        with open(os.path.join(out, name + ".rgb" + ("a" if alpha else "")), "wb") as f:
            f.write(bytes(v for r in expected for v in r))
    """#

    @Test func decodesEveryColourTypeBitDepthAndInterlacing() throws {
        let directory = try makeTemporaryDirectory("chime-png")
        defer { try? FileManager.default.removeItem(at: directory) }
        let scriptURL = directory.appendingPathComponent("make.py")
        try Self.script.write(to: scriptURL, atomically: true, encoding: .utf8)
        let result = try runProgram("/usr/bin/python3", [Array(scriptURL.path.utf8), Array(directory.path.utf8)],
                                    environment: ["PATH": "/usr/bin:/bin"])
        try #require(result.status == 0, "pypng failed (apt-get install python3-png): \(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".png") }.sorted()
        #expect(names.count == 9)
        for name in names {
            let base = directory.appendingPathComponent(String(name.dropLast(4)))
            let image = try ImageData(pngFile: base.path + ".png")
            let hasAlpha = FileManager.default.fileExists(atPath: base.path + ".rgba")
            let expected = try [UInt8](Data(contentsOf: URL(fileURLWithPath: base.path + (hasAlpha ? ".rgba" : ".rgb"))))
            #expect(image.width == 7 && image.height == 5, "\(name)")
            #expect(image.hasAlpha == hasAlpha, "\(name)")
            #expect(image.data == expected, "\(name)")
            #expect(image.rowStride == 7 * (hasAlpha ? 4 : 3), "\(name)")
        }
    }

    @Test func brokenFilesGiveErrorsNotCrashes() throws {
        #expect(throws: ImageError.self) { try ImageData(png: []) }
        #expect(throws: ImageError.self) { try ImageData(png: Array("not a png at all".utf8)) }
        #expect(throws: ImageError.self) { try ImageData(pngFile: "/nonexistent/chime.png") }
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        #expect(throws: ImageError.self) { try ImageData(png: signature) }
        // Random garbage after a valid signature, many times.
        var state: UInt64 = 12345
        for _ in 0..<500 {
            var bytes = signature
            for _ in 0..<Int(state % 200) {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                bytes.append(UInt8(truncatingIfNeeded: state >> 33))
            }
            state = state &* 6364136223846793005 &+ 1
            _ = try? ImageData(png: bytes)
        }
        #expect(throws: ImageError.self) { try ImageData(width: 2, height: 2, hasAlpha: true, pixels: [0, 0, 0]) }
        #expect(throws: ImageError.self) { try ImageData(width: 0, height: 2, hasAlpha: true, pixels: []) }
    }
}
