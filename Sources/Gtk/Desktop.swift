import CGtk

/// Opens a file in the app the desktop chooses for it (an alarm file in the user's editor).
public func openInDefaultApp(path: String, over window: Window) {
    guard let file = g_file_new_for_path(path) else { return }
    defer { g_object_unref(UnsafeMutableRawPointer(file)) }
    guard let uri = g_file_get_uri(file) else { return }
    defer { g_free(uri) }
    gtk_show_uri(window.cast(), uri, UInt32(GDK_CURRENT_TIME))
}

/// The desktop's file chooser, for one file to open; `body` gets its path (nil: cancelled).
public final class FileChooser: Object {
    private var onChoice: (String?) -> Void = { _ in }

    public init(title: String, over window: Window, accept: String, mimeTypes: [String]) {
        let chooser = gtk_file_chooser_native_new(title, window.cast(), GTK_FILE_CHOOSER_ACTION_OPEN, accept, nil)!
        super.init(adopting: UnsafeMutableRawPointer(chooser))
        if !mimeTypes.isEmpty, let filter = gtk_file_filter_new() {
            gtk_file_filter_set_name(filter, title)
            for type in mimeTypes { gtk_file_filter_add_mime_type(filter, type) }
            gtk_file_chooser_add_filter(opaque, filter)
            g_object_unref(UnsafeMutableRawPointer(filter))
        }
        onNumber("response") { [unowned self] response in
            var path: String?
            if Int32(bitPattern: response) == GTK_RESPONSE_ACCEPT.rawValue, let file = gtk_file_chooser_get_file(opaque) {
                if let cPath = g_file_get_path(file) {
                    path = String(cString: cPath)
                    g_free(cPath)
                }
                g_object_unref(UnsafeMutableRawPointer(file))
            }
            onChoice(path)
        }
    }

    public func show(_ body: @escaping (String?) -> Void) {
        onChoice = body
        gtk_native_dialog_show(cast())
    }
}

/// Looks for icons in `directory` too (a folder holding `hicolor/...`), before the system's.
public func addIconDirectory(_ directory: String) {
    guard let display = gdk_display_get_default(), let theme = gtk_icon_theme_get_for_display(display) else { return }
    gtk_icon_theme_add_search_path(theme, directory)
}

/// Adds `css` to every widget of the default display, above the theme (the app's own rules).
public func addStyle(_ css: String) {
    guard let display = gdk_display_get_default(), let provider = gtk_css_provider_new() else { return }
    gtk_css_provider_load_from_data(provider, css, -1)
    gtk_style_context_add_provider_for_display(display, OpaquePointer(provider), UInt32(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
}
