// The in-process benchmark: Notify round trips and pipelined throughput through
// chime's dbus and notifications layers, measured as bench/c/raw_notify.c
// measures raw libdbus. Prints "latency_us_median p99 throughput_per_s ok".
import DBus
import Notifications
#if canImport(Glibc)
import Glibc
#endif

func nowMicroseconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1e6 + Double(ts.tv_nsec) / 1e3
}

let arguments = CommandLine.arguments
let calls = arguments.count > 1 ? Int(arguments[1]) ?? 2000 : 2000
let pipelined = arguments.count > 2 ? Int(arguments[2]) ?? 20000 : 20000

do {
    let connection = try Connection(.session)
    let client = NotificationClient(connection: connection, timeout: .milliseconds(5000))
    func makeNotification() -> Notification {
        Notification(appName: "bench", summary: "Summary", body: "Body",
                     hints: [.senderPID(Int64(getpid())), .urgency(.normal)], expiration: .milliseconds(5000))
    }
    var samples: [Double] = []
    samples.reserveCapacity(calls)
    var check: UInt64 = 0
    for i in 0..<(calls + 100) {
        let start = nowMicroseconds()
        check &+= UInt64(try client.notify(makeNotification()))
        if i >= 100 { samples.append(nowMicroseconds() - start) }  // the first 100 warm up
    }
    samples.sort()

    // Pipelined: up to `window` calls in flight (the bus limits pending replies per connection).
    let window = 100
    var pending: [PendingCall] = []
    pending.reserveCapacity(pipelined)
    var collected = 0
    let start = nowMicroseconds()
    for i in 0..<pipelined {
        if i - collected == window {
            check &+= UInt64(try pending[collected].wait().arguments().first?.uint32Value ?? 0)
            collected += 1
        }
        let message = try Message.methodCall(
            destination: NotificationClient.busName, path: NotificationClient.objectPath,
            interface: NotificationClient.interface, member: "Notify", arguments: makeNotification().arguments)
        pending.append(try connection.send(message, timeout: .milliseconds(25000)))
    }
    while collected < pipelined {
        check &+= UInt64(try pending[collected].wait().arguments().first?.uint32Value ?? 0)
        collected += 1
    }
    let elapsed = nowMicroseconds() - start
    print(samples[calls / 2], samples[calls * 99 / 100], Int(Double(pipelined) / (elapsed / 1e6)), check > 0 ? 1 : 0)
} catch {
    print("chime-bench: \(error)")
    exit(1)
}
