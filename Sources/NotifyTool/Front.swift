import Notifications
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// The `chime` executable: `chime notify` and chime started as `notify-send`, run here, in a binary
/// that holds only what a notification needs (the D-Bus and notification layers, this module); every
/// other command, and the rare notify command lines only swift-argument-parser reads (help, errors
/// worded by it), are handed to `chime-commands` in the same process (`execv`, same PID, same
/// arguments). A position-independent binary pays at every start for each pointer the loader must
/// relocate: chime-commands holds 48,000 of them, this one 17,000 (docs/BENCHMARKS.md, issue 25).
public enum Front {
    public static func main() -> Never {
        // Strings on D-Bus must be UTF-8; libdbus aborts on anything else, and Swift would quietly
        // repair it. Refuse it here, naming the argument.
        if let bad = firstInvalidUTF8Argument() {
            if NotifySendName.isActive { ExitStatus.asNotifySend = true }
            ExitStatus.invalidInput.exit(
                "argument \(bad.index) is not valid UTF-8 (\(bad.shown)); D-Bus can only carry UTF-8 text")
        }
        if NotifySendName.isActive { NotifySendName.main(unusual: { _ in handOver() }) }
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.elementsEqual(["-v"]) || arguments.elementsEqual(["--version"]) {
            printLine("chime \(chimeVersion)")
            Sys.exit(ExitStatus.success.rawValue)
        }
        if arguments.first == "notify",
            let options = NotifyOptions(fastParsing: NotifyOptions.normalizedAsGOption(arguments.dropFirst()))
        {
            NotifyRunner(options: options).runAndExit()
        }
        handOver()
    }

    /// The program that runs every other command: beside this one (a build directory), or in
    /// `../libexec/chime/` (an installation: `/usr/bin/chime`, `/usr/libexec/chime/chime-commands`).
    static var commandsPath: String? {
        guard let executable = Sys.linkTarget("/proc/self/exe"), let slash = executable.lastIndex(of: "/") else { return nil }
        let directory = String(executable[..<slash])
        let parent = directory.lastIndex(of: "/").map { String(directory[..<$0]) } ?? ""
        return [directory + "/chime-commands", parent + "/libexec/chime/chime-commands"].first(where: Sys.isExecutable)
    }

    /// Replaces this process with chime-commands, given the same arguments (the first included, so
    /// that started as notify-send it is still notify-send).
    static func handOver() -> Never {
        guard let path = commandsPath else {
            ExitStatus.missingPart.exit(
                "chime-commands is neither beside chime nor in ../libexec/chime: the installation is incomplete; reinstall chime")
        }
        Sys.flushStandardOutput()
        execv(path, CommandLine.unsafeArgv)
        ExitStatus.missingPart.exit("cannot run \(path): \(String(cString: strerror(errno)))")
    }
}
