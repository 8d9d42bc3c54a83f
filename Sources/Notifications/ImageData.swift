import DBus
import Posix
internal import CZlib
#if canImport(Glibc)
import Glibc
#endif

/// Raw pixels for the `image-data` hint (`(iiibiiay)`): 8 bits per sample,
/// RGB or RGBA, rows `rowStride` bytes apart.
public struct ImageData: Sendable, Hashable {
    public var width: Int32
    public var height: Int32
    public var rowStride: Int32
    public var hasAlpha: Bool
    public var bitsPerSample: Int32 { 8 }
    public var channels: Int32 { hasAlpha ? 4 : 3 }
    public var data: [UInt8]

    /// Pixels as rows of RGB or RGBA bytes with no padding.
    public init(width: Int, height: Int, hasAlpha: Bool, pixels: [UInt8]) throws(ImageError) {
        guard width > 0, height > 0, width <= ImageData.maximumSide, height <= ImageData.maximumSide else {
            throw ImageError("image size \(width)x\(height) is outside 1-\(ImageData.maximumSide) pixels a side")
        }
        let stride = width * (hasAlpha ? 4 : 3)
        guard pixels.count == stride * height else {
            throw ImageError("\(width)x\(height) \(hasAlpha ? "RGBA" : "RGB") needs \(stride * height) bytes, got \(pixels.count)")
        }
        self.width = Int32(width)
        self.height = Int32(height)
        self.rowStride = Int32(stride)
        self.hasAlpha = hasAlpha
        self.data = pixels
    }

    /// The largest side accepted, to keep a hostile file from exhausting memory.
    public static let maximumSide = 4096

    /// The hint's value.
    public var value: Value {
        .structure([
            .int32(width), .int32(height), .int32(rowStride), .boolean(hasAlpha), .int32(bitsPerSample),
            .int32(channels), .array(element: .byte, data.map(Value.byte)),
        ])
    }

    /// Reads an `(iiibiiay)` value with 8 bits per sample.
    public init?(value: Value) {
        guard case .structure(let f) = value, f.count == 7,
            case .int32(let w) = f[0], case .int32(let h) = f[1], case .int32(let stride) = f[2],
            case .boolean(let alpha) = f[3], case .int32(8) = f[4], case .int32(let channels) = f[5],
            channels == (alpha ? 4 : 3), case .array(.byte, let bytes) = f[6]
        else { return nil }
        width = w
        height = h
        rowStride = stride
        hasAlpha = alpha
        data = bytes.compactMap { if case .byte(let b) = $0 { b } else { nil } }
    }

    /// Decodes a PNG file (any colour type and bit depth, interlaced or not).
    public init(pngFile path: String) throws(ImageError) {
        try self.init(png: try readFile(path, limit: 64 << 20))
    }

    /// Decodes PNG bytes.
    public init(png bytes: [UInt8]) throws(ImageError) {
        self = try PNGDecoder(bytes).decode()
    }
}

/// Why an image could not be used.
public struct ImageError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Reads a whole file, up to `limit` bytes.
func readFile(_ path: String, limit: Int) throws(ImageError) -> [UInt8] {
    let bytes: [UInt8]
    do { bytes = try Sys.readFile(path, limit: limit) } catch {
        throw ImageError("cannot \(error.call == "open" ? "open" : "read") \(path): \(error.reason)")
    }
    if bytes.count > limit { throw ImageError("\(path) is larger than \(limit >> 20) MiB") }
    return bytes
}

// MARK: - PNG

/// zlib's functions, opened once, the first time a PNG is decoded; nil with the reason when libz
/// cannot be opened (zlib1g is Essential in Debian: that is a broken system).
private let zlib: Result<chime_zlib, ImageError> = {
    var table = chime_zlib()
    if let failure = chime_load_zlib(&table) {
        return .failure(ImageError("cannot decode PNG images: zlib (libz.so.1) cannot be loaded: \(String(cString: failure))"))
    }
    return .success(table)
}()

private struct PNGDecoder {
    let bytes: [UInt8]
    let z: chime_zlib
    init(_ bytes: [UInt8]) throws(ImageError) {
        self.bytes = bytes
        z = try zlib.get()
    }

    func u32(_ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }

    func decode() throws(ImageError) -> ImageData {
        let magic: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 8, Array(bytes[0..<8]) == magic else { throw ImageError("not a PNG file") }
        var at = 8
        var width = 0, height = 0, depth = 0, colorType = 0, interlaced = false
        var palette: [UInt8] = []
        var transparency: [UInt8] = []
        var compressed: [UInt8] = []
        var sawHeader = false, sawEnd = false
        while at + 12 <= bytes.count {
            let length = Int(u32(at))
            let type = String(decoding: bytes[at + 4..<at + 8], as: UTF8.self)
            guard length <= bytes.count - at - 12 else { throw ImageError("PNG chunk \(type) runs past the end of the file") }
            let data = bytes[at + 8..<at + 8 + length]
            let storedCRC = u32(at + 8 + length)
            let crc = bytes[at + 4..<at + 8 + length].withUnsafeBufferPointer {
                UInt32(z.crc32(0, $0.baseAddress, UInt32($0.count)))
            }
            guard crc == storedCRC else { throw ImageError("PNG chunk \(type) is corrupt (bad CRC)") }
            switch type {
            case "IHDR":
                guard length == 13 else { throw ImageError("PNG header has the wrong size") }
                width = Int(u32(at + 8))
                height = Int(u32(at + 12))
                depth = Int(bytes[at + 16])
                colorType = Int(bytes[at + 17])
                guard bytes[at + 18] == 0, bytes[at + 19] == 0 else { throw ImageError("unknown PNG compression or filter method") }
                interlaced = bytes[at + 20] == 1
                sawHeader = true
            case "PLTE": palette = Array(data)
            case "tRNS": transparency = Array(data)
            case "IDAT": compressed.append(contentsOf: data)
            case "IEND": sawEnd = true
            default: break
            }
            at += 12 + length
            if sawEnd { break }
        }
        guard sawHeader else { throw ImageError("PNG has no header") }
        guard sawEnd else { throw ImageError("PNG is truncated") }
        guard width > 0, height > 0, width <= ImageData.maximumSide, height <= ImageData.maximumSide else {
            throw ImageError("PNG size \(width)x\(height) is outside 1-\(ImageData.maximumSide) pixels a side")
        }
        let samples: Int
        switch (colorType, depth) {
        case (0, 1), (0, 2), (0, 4), (0, 8), (0, 16): samples = 1
        case (2, 8), (2, 16): samples = 3
        case (3, 1), (3, 2), (3, 4), (3, 8): samples = 1
        case (4, 8), (4, 16): samples = 2
        case (6, 8), (6, 16): samples = 4
        default: throw ImageError("PNG colour type \(colorType) with bit depth \(depth) is not valid")
        }
        if colorType == 3, palette.isEmpty { throw ImageError("palette PNG has no palette") }

        // Every pass of the image, with filter bytes, to size the inflate buffer.
        let passes: [(x0: Int, y0: Int, dx: Int, dy: Int)] = interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        func passSize(_ p: (x0: Int, y0: Int, dx: Int, dy: Int)) -> (w: Int, h: Int) {
            ((width - p.x0 + p.dx - 1) / p.dx, (height - p.y0 + p.dy - 1) / p.dy)
        }
        var expected = 0
        for pass in passes {
            let (w, h) = passSize(pass)
            if w > 0, h > 0 { expected += h * (1 + (w * samples * depth + 7) / 8) }
        }
        let raw = try inflate(compressed, expected: expected)

        let hasAlpha = colorType == 4 || colorType == 6 || !transparency.isEmpty
        let outChannels = hasAlpha ? 4 : 3
        var out = [UInt8](repeating: 0, count: width * height * outChannels)
        let bytesPerPixel = max(1, samples * depth / 8)
        var offset = 0
        for pass in passes {
            let (w, h) = passSize(pass)
            if w == 0 || h == 0 { continue }
            let stride = (w * samples * depth + 7) / 8
            var previous = [UInt8](repeating: 0, count: stride)
            var line = [UInt8](repeating: 0, count: stride)
            for row in 0..<h {
                let filter = raw[offset]
                for i in 0..<stride { line[i] = raw[offset + 1 + i] }
                offset += 1 + stride
                try unfilter(&line, previous: previous, filter: filter, bpp: bytesPerPixel)
                for column in 0..<w {
                    let x = pass.x0 + column * pass.dx
                    let y = pass.y0 + row * pass.dy
                    let pixel = (y * width + x) * outChannels
                    var rgba: (UInt8, UInt8, UInt8, UInt8)
                    func sample(_ index: Int) -> Int {
                        switch depth {
                        case 16: return Int(line[index * 2]) << 8 | Int(line[index * 2 + 1])
                        case 8: return Int(line[index])
                        default:
                            let bit = index * depth
                            let byte = Int(line[bit / 8])
                            return (byte >> (8 - depth - bit % 8)) & ((1 << depth) - 1)
                        }
                    }
                    func scale(_ value: Int) -> UInt8 {
                        depth == 16 ? UInt8(value >> 8) : UInt8(value * 255 / ((1 << depth) - 1))
                    }
                    let base = column * samples
                    switch colorType {
                    case 0:
                        let g = sample(base)
                        let opaque = transparency.count >= 2 && (Int(transparency[0]) << 8 | Int(transparency[1])) == g ? 0 : 255
                        rgba = (scale(g), scale(g), scale(g), UInt8(opaque))
                    case 2:
                        let r = sample(base), g = sample(base + 1), b = sample(base + 2)
                        var alpha: UInt8 = 255
                        if transparency.count >= 6 {
                            let tr = Int(transparency[0]) << 8 | Int(transparency[1])
                            let tg = Int(transparency[2]) << 8 | Int(transparency[3])
                            let tb = Int(transparency[4]) << 8 | Int(transparency[5])
                            if (r, g, b) == (tr, tg, tb) { alpha = 0 }
                        }
                        rgba = (scale(r), scale(g), scale(b), alpha)
                    case 3:
                        let index = sample(base)
                        guard index * 3 + 2 < palette.count else { throw ImageError("PNG pixel uses a colour missing from its palette") }
                        let alpha = index < transparency.count ? transparency[index] : 255
                        rgba = (palette[index * 3], palette[index * 3 + 1], palette[index * 3 + 2], alpha)
                    case 4:
                        let g = scale(sample(base))
                        rgba = (g, g, g, scale(sample(base + 1)))
                    default:
                        rgba = (scale(sample(base)), scale(sample(base + 1)), scale(sample(base + 2)), scale(sample(base + 3)))
                    }
                    out[pixel] = rgba.0
                    out[pixel + 1] = rgba.1
                    out[pixel + 2] = rgba.2
                    if hasAlpha { out[pixel + 3] = rgba.3 }
                }
                swap(&previous, &line)
            }
        }
        return try ImageData(width: width, height: height, hasAlpha: hasAlpha, pixels: out)
    }

    func unfilter(_ line: inout [UInt8], previous: [UInt8], filter: UInt8, bpp: Int) throws(ImageError) {
        switch filter {
        case 0: break
        case 1: for i in bpp..<max(bpp, line.count) { line[i] &+= line[i - bpp] }
        case 2: for i in 0..<line.count { line[i] &+= previous[i] }
        case 3:
            for i in 0..<line.count {
                let left = i >= bpp ? Int(line[i - bpp]) : 0
                line[i] &+= UInt8((left + Int(previous[i])) / 2)
            }
        case 4:
            for i in 0..<line.count {
                let a = i >= bpp ? Int(line[i - bpp]) : 0
                let b = Int(previous[i])
                let c = i >= bpp ? Int(previous[i - bpp]) : 0
                let p = a + b - c
                let pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                line[i] &+= UInt8(pa <= pb && pa <= pc ? a : (pb <= pc ? b : c))
            }
        default: throw ImageError("PNG uses unknown filter type \(filter)")
        }
    }

    func inflate(_ input: [UInt8], expected: Int) throws(ImageError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: expected)
        var stream = z_stream()
        guard withUnsafePointer(to: z, { chime_inflate_init($0, &stream) }) == Z_OK else { throw ImageError("zlib could not start") }
        defer { _ = z.inflateEnd(&stream) }
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                return z.inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END || (status == Z_BUF_ERROR && stream.avail_out == 0) else {
            throw ImageError("PNG image data is corrupt")
        }
        guard stream.avail_out == 0 else { throw ImageError("PNG image data is shorter than the image") }
        return output
    }
}
