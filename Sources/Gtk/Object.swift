// The thin layer the desktop app needs over GTK 4 and libadwaita, as `DBus` is over libdbus:
// every GObject is owned by one Swift object and released in its `deinit`; a signal's closure is
// kept by the object it was connected on and disconnected when that object goes; GTK is touched
// from the main thread only (the app has no other); no C type appears in a public signature.
import CGtk

/// A GObject held by Swift: one reference, taken at `init` and given back at `deinit`.
///
/// Widgets are created floating; the wrapper sinks the floating reference, so a widget lives as
/// long as its wrapper or its parent, whichever is longer.
open class Object {
    /// The C object (`GObject *`).
    package let raw: UnsafeMutableRawPointer
    private var handlers: [(id: UInt, closure: Closure)] = []

    /// Takes `raw`'s floating reference (a new widget) or adds one of its own (an object someone else owns).
    package init(sinking raw: UnsafeMutableRawPointer) {
        self.raw = raw
        g_object_ref_sink(raw)
    }

    /// Adopts a full reference the caller already owns (`g_object_new` of a non-floating type).
    package init(adopting raw: UnsafeMutableRawPointer) {
        self.raw = raw
    }

    deinit {
        for handler in handlers { g_signal_handler_disconnect(raw, gulong(handler.id)) }
        g_object_unref(raw)
    }

    package func cast<T>() -> UnsafeMutablePointer<T> { raw.assumingMemoryBound(to: T.self) }
    package var opaque: OpaquePointer { OpaquePointer(raw) }

    // MARK: Signals

    /// Runs `body` when the signal is emitted (signals whose handler takes no argument and returns nothing).
    public func on(_ signal: String, _ body: @escaping () -> Void) {
        connect(signal, Closure { _, _ in body(); return 0 }, unsafeBitCast(voidTrampoline, to: GCallback.self))
    }

    /// For signals whose handler returns a boolean (`close-request`: true stops the default handler).
    public func onReturning(_ signal: String, _ body: @escaping () -> Bool) {
        connect(signal, Closure { _, _ in body() ? 1 : 0 }, unsafeBitCast(voidTrampoline, to: GCallback.self))
    }

    /// For signals with one pointer argument (`notify::…`, a factory's `bind`).
    package func onPointer(_ signal: String, _ body: @escaping (UnsafeMutableRawPointer?) -> Void) {
        connect(signal, Closure { pointer, _ in body(pointer); return 0 }, unsafeBitCast(pointerTrampoline, to: GCallback.self))
    }

    /// For signals with one unsigned argument (a list view's `activate` with the position).
    package func onNumber(_ signal: String, _ body: @escaping (UInt32) -> Void) {
        connect(signal, Closure { _, number in body(UInt32(truncatingIfNeeded: number)); return 0 },
                unsafeBitCast(numberTrampoline, to: GCallback.self))
    }

    /// For signals with one boolean argument that return a boolean (a switch's `state-set`).
    package func onBoolean(_ signal: String, _ body: @escaping (Bool) -> Bool) {
        connect(signal, Closure { _, number in body(number != 0) ? 1 : 0 }, unsafeBitCast(booleanTrampoline, to: GCallback.self))
    }

    /// Runs `body` when `property` changes.
    public func onChange(of property: String, _ body: @escaping () -> Void) {
        onPointer("notify::" + property) { _ in body() }
    }

    private func connect(_ signal: String, _ closure: Closure, _ callback: GCallback) {
        let id = g_signal_connect_data(raw, signal, callback, Unmanaged.passUnretained(closure).toOpaque(), nil, GConnectFlags(0))
        precondition(id != 0, "no signal \(signal) on \(String(cString: g_type_name_from_instance(cast())))")
        handlers.append((UInt(id), closure))
    }
}

/// A signal's Swift closure: (pointer argument, integer argument) → the handler's return value.
final class Closure {
    let body: (UnsafeMutableRawPointer?, UInt) -> Int32
    init(_ body: @escaping (UnsafeMutableRawPointer?, UInt) -> Int32) { self.body = body }
    static func from(_ data: UnsafeMutableRawPointer?) -> Closure { Unmanaged<Closure>.fromOpaque(data!).takeUnretainedValue() }
}

// The C signatures signals call. A handler that returns nothing ignores the return register.
private let voidTrampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32 = { _, data in
    Closure.from(data).body(nil, 0)
}
private let pointerTrampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32 = {
    _, pointer, data in Closure.from(data).body(pointer, 0)
}
private let numberTrampoline: @convention(c) (UnsafeMutableRawPointer?, UInt32, UnsafeMutableRawPointer?) -> Int32 = { _, number, data in
    Closure.from(data).body(nil, UInt(number))
}
private let booleanTrampoline: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutableRawPointer?) -> Int32 = { _, value, data in
    Closure.from(data).body(nil, UInt(bitPattern: Int(value)))
}

extension String {
    /// A C string GLib allocated, copied; nil stays nil.
    init?(glib pointer: UnsafePointer<CChar>?) {
        guard let pointer else { return nil }
        self.init(cString: pointer)
    }
}
