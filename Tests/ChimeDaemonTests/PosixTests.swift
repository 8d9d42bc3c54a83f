import Foundation
import Posix
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The one libc layer on its own: each call's result checked, errno typed.
@Suite struct PosixTests {
    @Test func aFailedCallSaysWhichCallWhatItWorkedOnAndWhy() throws {
        do {
            _ = try Sys.open("/no/such/directory/file", O_RDONLY)
            Issue.record("opened a file that is not there")
        } catch {
            #expect(error.errno == .noEntry)
            #expect(error.description == "/no/such/directory/file: open: No such file or directory")
        }
        #expect(try Sys.status("/no/such/file") == nil)
        #expect(try Sys.status("/") != nil)
        #expect(Sys.isDirectory("/") && !Sys.isDirectory("/etc/passwd"))
        #expect(Errno.wouldBlock.description == "Resource temporarily unavailable")
        // A process that has gone is no error to signal; one that is not ours to wait for is.
        #expect(throws: Never.self) { try Sys.signal(Int32.max, 0) }
        #expect(throws: SystemError.self) { try Sys.reap(1) }
    }

    @Test func pipesReadWithoutBlockingAndFilesReadToTheirLimit() throws {
        // Each descriptor is closed exactly once: the tests share one process, and a second close
        // of a number another thread has since been given closes that test's pipe or socket (seen:
        // a ring test's private bus vanished when its desktop's input pipe was closed here).
        let pipe = try Sys.pipe(nonBlockingRead: true)
        defer { try? Sys.close(pipe.read) }
        #expect(try Sys.read(pipe.read, upTo: 16) == nil)  // nothing yet: nil, not an error
        do {
            defer { try? Sys.close(pipe.write) }
            try Sys.writeAll(pipe.write, "chime".utf8)
            #expect(try Sys.read(pipe.read, upTo: 16) == Array("chime".utf8))
        }
        #expect(try Sys.read(pipe.read, upTo: 16) == [])  // the end
        #expect(fcntl(pipe.read, F_GETFD) & FD_CLOEXEC != 0)

        let directory = try makeTemporaryDirectory("chime-posix")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("f").path
        let fd = try Sys.open(file, O_RDWR | O_CREAT)
        try Sys.writeAll(fd, Array(repeating: UInt8(ascii: "x"), count: 100), at: 0)
        try Sys.close(fd)
        #expect(try Sys.readFile(file, limit: 1000).count == 100)
        #expect(try Sys.readFile(file, limit: 10).count == 11)  // more than the limit: limit + 1
        let reader = try Sys.open(file, O_RDONLY)
        #expect(try Sys.read(reader, upTo: 40, at: 90) == Array(repeating: UInt8(ascii: "x"), count: 10))
        try Sys.close(reader)
        // Larger than one chunk, every byte in its place: a regular file (read by its length) and
        // the same through a pipe (no length: chunks that grow).
        let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let big = try Sys.open(file, O_RDWR | O_TRUNC)
        try Sys.writeAll(big, large, at: 0)
        try Sys.close(big)
        #expect(try Sys.readFile(file, limit: 1 << 20) == large)
        #expect(try Sys.readFile(file, limit: 100_000) == Array(large[..<100_001]))
        let piped = try Sys.pipe()
        let writer = Thread {
            try? Sys.writeAll(piped.write, large)
            try? Sys.close(piped.write)
        }
        writer.start()
        #expect(try Sys.readFile("/dev/fd/\(piped.read)", limit: 1 << 20) == large)
        try Sys.close(piped.read)
        // A file of /proc says no length: read to its end all the same.
        let maps = try Sys.readFile("/proc/self/maps", limit: 1 << 24)
        #expect(maps.count > 100 && maps.last == UInt8(ascii: "\n"))
        try Sys.removeFile(file)
        try Sys.removeFile(file)  // gone already: no error
    }

    @Test func aSpawnedProgramGetsItsStreamsAndACleanSignalState() throws {
        let pipe = try Sys.pipe()
        // The test runner's threads block signals; the child must not inherit that.
        let pid = try Spawn.start("sh", arguments: [Array("sh".utf8), Array("-c".utf8), Array("grep SigBlk /proc/self/status".utf8)],
                                  stdout: .descriptor(pipe.write))
        try Sys.close(pipe.write)
        let status = try Sys.wait(pid)
        var output: [UInt8] = []
        while let chunk = try Sys.read(pipe.read, upTo: 256), !chunk.isEmpty { output += chunk }
        try Sys.close(pipe.read)
        #expect(status == 0)
        #expect(String(decoding: output, as: UTF8.self) == "SigBlk:\t0000000000000000\n")
        #expect(throws: SystemError.self) { try Spawn.start("/no/such/program", arguments: [[0x78]]) }
    }

    /// A descriptor this process holds without close-on-exec (as Foundation's atomic write holds
    /// its file while it writes) is not passed on: what the child has open is its three streams and
    /// whatever it opens itself (a preloaded library may open one), never that file.
    @Test func aSpawnedProgramInheritsNoOtherDescriptor() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("chime-leak-\(UUID().uuidString)").path
        let leaky = open(path, O_WRONLY | O_CREAT, 0o600)  // (no O_CLOEXEC)
        #expect(leaky > 2)
        defer { close(leaky); unlink(path) }
        let pipe = try Sys.pipe()
        let pid = try Spawn.start("sh", arguments: [Array("sh".utf8), Array("-c".utf8), Array("for fd in /proc/$$/fd/*; do echo \"${fd##*/} $(readlink $fd)\"; done".utf8)],
                                  stdout: .descriptor(pipe.write))
        try Sys.close(pipe.write)
        let status = try Sys.wait(pid)
        var output: [UInt8] = []
        while let chunk = try Sys.read(pipe.read, upTo: 256), !chunk.isEmpty { output += chunk }
        try Sys.close(pipe.read)
        #expect(status == 0)
        let held = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(Set(held.compactMap { $0.split(separator: " ").first.map(String.init) }).isSuperset(of: ["0", "1", "2"]), "\(held)")
        #expect(!held.contains { $0.hasSuffix(" " + path) }, "the file held open in the parent (descriptor \(leaky)) is open in the child: \(held)")
    }
}
