import CGtk

/// A `GtkWidget`.
open class Widget: Object {
    package var widget: UnsafeMutablePointer<GtkWidget> { cast() }

    public var isVisible: Bool {
        get { gtk_widget_get_visible(widget) != 0 }
        set { gtk_widget_set_visible(widget, newValue ? 1 : 0) }
    }

    /// Whether it is on screen (mapped: it and every widget above it shown, in a window shown).
    public var isMapped: Bool { gtk_widget_get_mapped(widget) != 0 }

    public var isSensitive: Bool {
        get { gtk_widget_get_sensitive(widget) != 0 }
        set { gtk_widget_set_sensitive(widget, newValue ? 1 : 0) }
    }

    /// Its tooltip ("" for none). GTK asks the display server where the pointer is after each
    /// change of a shown widget's tooltip (two round trips on X11): a list's rows set theirs as they
    /// are made and bound, before they are on screen, so an unchanged text is not set again and a
    /// widget not on screen (which no pointer is over) has its text changed while it is hidden.
    public var tooltip: String {
        get { String(glib: gtk_widget_get_tooltip_text(widget)) ?? "" }
        set {
            guard newValue != tooltip else { return }
            let text = newValue.isEmpty ? nil : newValue
            if gtk_widget_get_mapped(widget) == 0 && gtk_widget_get_visible(widget) != 0 {
                gtk_widget_set_visible(widget, 0)
                gtk_widget_set_tooltip_text(widget, text)
                gtk_widget_set_visible(widget, 1)
            } else {
                gtk_widget_set_tooltip_text(widget, text)
            }
        }
    }

    /// The name assistive technologies read (and the AT-SPI tests find it by), as last set here
    /// ("" where GTK names the widget from its text).
    public var accessibleName: String = "" {
        didSet { chime_gtk_set_accessible_label(OpaquePointer(raw), accessibleName) }
    }

    public func addClass(_ name: String) { gtk_widget_add_css_class(widget, name) }
    public func removeClass(_ name: String) { gtk_widget_remove_css_class(widget, name) }
    public func setClass(_ name: String, _ on: Bool) { on ? addClass(name) : removeClass(name) }

    public enum Align: Sendable, CaseIterable { case fill, start, end, center, baseline
        var c: GtkAlign {
            switch self {
            case .fill: GTK_ALIGN_FILL
            case .start: GTK_ALIGN_START
            case .end: GTK_ALIGN_END
            case .center: GTK_ALIGN_CENTER
            case .baseline: GTK_ALIGN_BASELINE
            }
        }

        init(_ c: GtkAlign) { self = Align.allCases.first { $0.c == c } ?? .fill }
    }

    public var horizontalAlignment: Align {
        get { Align(gtk_widget_get_halign(widget)) }
        set { gtk_widget_set_halign(widget, newValue.c) }
    }

    public var verticalAlignment: Align {
        get { Align(gtk_widget_get_valign(widget)) }
        set { gtk_widget_set_valign(widget, newValue.c) }
    }

    public var expandsHorizontally: Bool {
        get { gtk_widget_get_hexpand(widget) != 0 }
        set { gtk_widget_set_hexpand(widget, newValue ? 1 : 0) }
    }

    public var expandsVertically: Bool {
        get { gtk_widget_get_vexpand(widget) != 0 }
        set { gtk_widget_set_vexpand(widget, newValue ? 1 : 0) }
    }

    /// Space around the widget, in pixels: top, end, bottom, start.
    public func margins(_ top: Int32, _ end: Int32, _ bottom: Int32, _ start: Int32) {
        gtk_widget_set_margin_top(widget, top)
        gtk_widget_set_margin_end(widget, end)
        gtk_widget_set_margin_bottom(widget, bottom)
        gtk_widget_set_margin_start(widget, start)
    }

    public func margins(_ all: Int32) { margins(all, all, all, all) }

    public func sizeRequest(width: Int32 = -1, height: Int32 = -1) { gtk_widget_set_size_request(widget, width, height) }

    @discardableResult
    public func grabFocus() -> Bool { gtk_widget_grab_focus(widget) != 0 }

    /// The name of an action (`app.quit`, `win.new-alarm`) a button or row activates.
    public func setAction(_ name: String) { gtk_actionable_set_action_name(OpaquePointer(raw), name) }

    /// Runs `body` after each frame the widget's window draws (the frame clock's `after-paint`),
    /// from the first one on.
    public func onPaint(_ body: @escaping () -> Void) {
        paintWatches.append(FrameWatch(widget: self, signal: "after-paint", body: body))
    }

    /// Runs `body` as each frame of the widget's window begins (the frame clock's `before-paint`:
    /// the frame's work, its layout and drawing, follows).
    public func onFrameStart(_ body: @escaping () -> Void) {
        paintWatches.append(FrameWatch(widget: self, signal: "before-paint", body: body))
    }

    private var paintWatches: [FrameWatch] = []
}

/// Calls back at a phase of every frame of a widget's frame clock, once the widget is mapped.
final class FrameWatch {
    private var clock: Object?
    private let body: () -> Void

    init(widget: Widget, signal: String, body: @escaping () -> Void) {
        self.body = body
        widget.on("map") { [unowned self, unowned widget] in
            guard clock == nil, let frameClock = gtk_widget_get_frame_clock(widget.widget) else { return }
            let clock = Object(sinking: UnsafeMutableRawPointer(frameClock))
            clock.on(signal) { [unowned self] in self.body() }
            self.clock = clock
        }
    }
}

// MARK: - Text

public final class Label: Widget {
    public init(_ text: String = "") { super.init(sinking: UnsafeMutableRawPointer(gtk_label_new(text))) }

    public var text: String {
        get { String(cString: gtk_label_get_text(opaque)) }
        set { gtk_label_set_text(opaque, newValue) }
    }

    /// Text with Pango markup (escape what is not yours with `escapedMarkup`).
    public func setMarkup(_ markup: String) { gtk_label_set_markup(opaque, markup) }

    public var wraps: Bool {
        get { gtk_label_get_wrap(opaque) != 0 }
        set {
            gtk_label_set_wrap(opaque, newValue ? 1 : 0)
            gtk_label_set_wrap_mode(opaque, PANGO_WRAP_WORD_CHAR)
        }
    }

    /// Cut with "…" at the end rather than grow.
    public func ellipsizes() { gtk_label_set_ellipsize(opaque, PANGO_ELLIPSIZE_END) }

    /// 0: text starts at the leading edge; 1: the trailing one.
    public var xAlignment: Float {
        get { gtk_label_get_xalign(opaque) }
        set { gtk_label_set_xalign(opaque, newValue) }
    }

}

/// `text` with Pango markup's special characters escaped.
public func escapedMarkup(_ text: String) -> String {
    guard let escaped = g_markup_escape_text(text, -1) else { return "" }
    defer { g_free(escaped) }
    return String(cString: escaped)
}

// MARK: - Buttons

public class Button: Widget {
    /// A button with a text; `_` marks its mnemonic (`_Save`: Alt+S).
    public init(label: String) {
        // The text is a label child of its own, so the accessible name is the text once, without
        // the mnemonic's underscore (GTK 4.8 names a mnemonic button "_Save Save" otherwise).
        super.init(sinking: UnsafeMutableRawPointer(gtk_button_new()))
        let text = gtk_label_new_with_mnemonic(label)
        gtk_label_set_mnemonic_widget(OpaquePointer(text), widget)
        gtk_button_set_child(cast(), text)
    }

    /// An icon-only button; `name` is what assistive technologies read and the tooltip shows.
    public init(icon: String, name: String) {
        super.init(sinking: UnsafeMutableRawPointer(gtk_button_new_from_icon_name(icon)))
        accessibleName = name
        tooltip = name
    }

    package override init(sinking raw: UnsafeMutableRawPointer) { super.init(sinking: raw) }

    public var iconName: String {
        get { String(glib: gtk_button_get_icon_name(cast())) ?? "" }
        set { gtk_button_set_icon_name(cast(), newValue) }
    }

    public func onClick(_ body: @escaping () -> Void) { on("clicked", body) }
}

public final class ToggleButton: Button {
    public init(label: String, name: String) {
        super.init(sinking: UnsafeMutableRawPointer(gtk_toggle_button_new_with_label(label)))
        accessibleName = name
        tooltip = name
    }

    public var isActive: Bool {
        get { gtk_toggle_button_get_active(cast()) != 0 }
        set { gtk_toggle_button_set_active(cast(), newValue ? 1 : 0) }
    }

    public func onToggle(_ body: @escaping () -> Void) { on("toggled", body) }
}

public final class Switch: Widget {
    /// Set while the program (not a person) moves the switch: its handler is not asked then.
    private var settingQuietly = false

    /// `name`: what assistive technologies read; nil where a row's title names it.
    public init(name: String?) {
        super.init(sinking: UnsafeMutableRawPointer(gtk_switch_new()))
        if let name { accessibleName = name }
        verticalAlignment = .center
    }

    /// Where it stands. Setting it moves it without asking `onFlip`'s handler.
    public var isOn: Bool {
        get { gtk_switch_get_active(opaque) != 0 }
        set {
            settingQuietly = true
            gtk_switch_set_active(opaque, newValue ? 1 : 0)
            gtk_switch_set_state(opaque, newValue ? 1 : 0)
            settingQuietly = false
        }
    }

    /// The person flipped it: `body` gets the new position and answers whether the switch takes
    /// it now (false: it shows the change as pending until `isOn` is set, as when the daemon must
    /// agree first).
    public func onFlip(_ body: @escaping (Bool) -> Bool) {
        onBoolean("state-set") { [unowned self] on in
            if settingQuietly { return false }  // GTK's own handler sets the state
            if body(on) { gtk_switch_set_state(opaque, on ? 1 : 0) }
            return true  // the handler decided
        }
    }
}

public final class SpinButton: Widget {
    public init(range: ClosedRange<Double>, step: Double, name: String) {
        super.init(sinking: UnsafeMutableRawPointer(gtk_spin_button_new_with_range(range.lowerBound, range.upperBound, step)))
        accessibleName = name
        gtk_spin_button_set_numeric(opaque, 1)
    }

    public var value: Double {
        get { gtk_spin_button_get_value(opaque) }
        set { gtk_spin_button_set_value(opaque, newValue) }
    }

    public var intValue: Int { Int(gtk_spin_button_get_value_as_int(opaque)) }

    /// Past the top it goes round to the bottom (minutes: 59 → 0).
    public var wrapsAround: Bool {
        get { gtk_spin_button_get_wrap(opaque) != 0 }
        set { gtk_spin_button_set_wrap(opaque, newValue ? 1 : 0) }
    }

    /// Shows the value with two digits (07), as a clock does.
    public func twoDigits() {
        onReturning("output") { [unowned self] in
            let v = Int(gtk_adjustment_get_value(gtk_spin_button_get_adjustment(opaque)))
            let text = v < 10 ? "0\(v)" : "\(v)"
            gtk_editable_set_text(opaque, text)
            return true
        }
        gtk_editable_set_width_chars(opaque, 2)
    }
}

// MARK: - Containers

public final class Box: Widget {
    private var children: [Widget] = []

    public init(vertical: Bool, spacing: Int32 = 0) {
        super.init(sinking: UnsafeMutableRawPointer(gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, spacing)))
    }

    public func append(_ child: Widget) {
        gtk_box_append(cast(), child.widget)
        children.append(child)
    }

    public func remove(_ child: Widget) {
        gtk_box_remove(cast(), child.widget)
        children.removeAll { $0 === child }
    }

    /// Buttons that touch, as one control (`linked`).
    public func link() { addClass("linked") }
}

/// A widget with one child, held by the wrapper too.
public class Bin: Widget {
    package var child: Widget?
}

public final class ScrolledWindow: Bin {
    public init(_ content: Widget) {
        super.init(sinking: UnsafeMutableRawPointer(gtk_scrolled_window_new()))
        gtk_scrolled_window_set_policy(opaque, GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_child(opaque, content.widget)
        child = content
        expandsVertically = true
    }
}

/// Keeps its child at most `maximum` pixels wide, centred (libadwaita's clamp).
public final class Clamp: Bin {
    public init(_ content: Widget, maximum: Int32 = 600) {
        super.init(sinking: UnsafeMutableRawPointer(adw_clamp_new()))
        adw_clamp_set_maximum_size(opaque, maximum)
        adw_clamp_set_child(opaque, content.widget)
        child = content
    }
}

/// A page that says what is (not) here: an icon, a title, a description, and a child below.
public final class StatusPage: Bin {
    public init(icon: String, title: String, description: String = "") {
        super.init(sinking: UnsafeMutableRawPointer(adw_status_page_new()))
        adw_status_page_set_icon_name(opaque, icon)
        self.title = title
        self.text = description
    }

    public var title: String {
        get { String(glib: adw_status_page_get_title(opaque)) ?? "" }
        set { adw_status_page_set_title(opaque, newValue) }
    }

    public var text: String {
        get { String(glib: adw_status_page_get_description(opaque)) ?? "" }
        set { adw_status_page_set_description(opaque, newValue.isEmpty ? nil : newValue) }
    }

    public func setChild(_ content: Widget) {
        adw_status_page_set_child(opaque, content.widget)
        child = content
    }
}

/// Pages one of which shows at a time, each with a name.
public final class Stack: Widget {
    private var pages: [String: Widget] = [:]

    public init() {
        super.init(sinking: UnsafeMutableRawPointer(gtk_stack_new()))
        gtk_stack_set_transition_type(opaque, GTK_STACK_TRANSITION_TYPE_CROSSFADE)
    }

    public func add(_ page: Widget, name: String) {
        gtk_stack_add_named(opaque, page.widget, name)
        pages[name] = page
    }

    public var visiblePage: String {
        get { String(glib: gtk_stack_get_visible_child_name(opaque)) ?? "" }
        set { gtk_stack_set_visible_child_name(opaque, newValue) }
    }
}

extension SpinButton {
    /// Arrows above and below the number, as a clock's hour and minute pickers.
    public func vertical() { gtk_orientable_set_orientation(opaque, GTK_ORIENTATION_VERTICAL) }
}

/// A check box, or a radio button once it is in a group.
public final class CheckButton: Widget {
    public init(name: String? = nil) {
        super.init(sinking: UnsafeMutableRawPointer(gtk_check_button_new()))
        if let name { accessibleName = name }
    }

    public var isActive: Bool {
        get { gtk_check_button_get_active(cast()) != 0 }
        set { gtk_check_button_set_active(cast(), newValue ? 1 : 0) }
    }

    /// Makes it one of a set of which one is chosen (radio buttons).
    public func join(_ other: CheckButton) { gtk_check_button_set_group(cast(), other.cast()) }

    public func onToggle(_ body: @escaping () -> Void) { on("toggled", body) }
}

/// A month's calendar to pick a day in (`GtkCalendar`): arrows and the keyboard move the day.
public final class Calendar: Widget {
    public init(name: String) {
        super.init(sinking: UnsafeMutableRawPointer(gtk_calendar_new()))
        accessibleName = name
    }

    /// The day picked: year, month (1-12) and day of the month.
    public var day: (year: Int, month: Int, day: Int) {
        get {
            let date = gtk_calendar_get_date(opaque)
            defer { g_date_time_unref(date) }
            return (Int(g_date_time_get_year(date)), Int(g_date_time_get_month(date)), Int(g_date_time_get_day_of_month(date)))
        }
        set {
            guard let date = g_date_time_new_local(Int32(newValue.year), Int32(newValue.month), Int32(newValue.day), 12, 0, 0) else { return }
            defer { g_date_time_unref(date) }
            gtk_calendar_select_day(opaque, date)
        }
    }

    /// Runs `body` when another day is picked.
    public func onDayPicked(_ body: @escaping () -> Void) { on("day-selected", body) }
}
