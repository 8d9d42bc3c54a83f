import ArgumentParser
import ChimeCenter
import DBus
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// Why a command line could not be split into words.
struct WordSplitError: Error, CustomStringConvertible {
    var description: String
}

/// Splits `text` into words the way a POSIX shell would for a simple command:
/// blanks separate words; single quotes keep everything literally; double
/// quotes keep everything but `\"`, `\\`, `\$` and `` \` ``; a backslash
/// outside quotes keeps the next character. Nothing is expanded: there are no
/// variables, globs, pipes or redirections, because no shell runs it.
func splitWords(_ text: String) throws(WordSplitError) -> [String] {
    var words: [String] = []
    var current = ""
    var inWord = false
    var iterator = text.makeIterator()
    while let c = iterator.next() {
        switch c {
        case " ", "\t", "\n":
            if inWord { words.append(current); current = ""; inWord = false }
        case "'":
            inWord = true
            while true {
                guard let q = iterator.next() else { throw WordSplitError(description: "a single quote is not closed") }
                if q == "'" { break }
                current.append(q)
            }
        case "\"":
            inWord = true
            while true {
                guard let q = iterator.next() else { throw WordSplitError(description: "a double quote is not closed") }
                if q == "\"" { break }
                if q == "\\" {
                    guard let next = iterator.next() else { throw WordSplitError(description: "a double quote is not closed") }
                    switch next {
                    case "\"", "\\", "$", "`": current.append(next)
                    case "\n": break  // a line continuation
                    default: current += "\\" + String(next)
                    }
                    continue
                }
                current.append(q)
            }
        case "\\":
            inWord = true
            guard let next = iterator.next() else { throw WordSplitError(description: "a backslash ends the command") }
            if next != "\n" { current.append(next) }
        default:
            inWord = true
            current.append(c)
        }
    }
    if inWord { words.append(current) }
    return words
}
