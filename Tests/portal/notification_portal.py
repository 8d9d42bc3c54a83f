"""A stand-in for xdg-desktop-portal's notification interface, for python3-dbusmock (our own template).

    python3 -m dbusmock --session --template Tests/portal/notification_portal.py -p '{"version": 2}'

It owns org.freedesktop.portal.Desktop and serves /org/freedesktop/portal/desktop with
org.freedesktop.portal.Notification: the `version` and `SupportedOptions` properties (parameters
"version", default 1, and "SupportedOptions", a dictionary of string arrays), AddNotification and
RemoveNotification (recorded by dbusmock: GetMethodCalls), and the shown notifications by id.
ActionInvoked is emitted with dbusmock's EmitSignal, as the portal emits it.
"""

import dbus

BUS_NAME = "org.freedesktop.portal.Desktop"
MAIN_OBJ = "/org/freedesktop/portal/desktop"
MAIN_IFACE = "org.freedesktop.portal.Notification"
SYSTEM_BUS = False


def load(mock, parameters):
    options = parameters.get("SupportedOptions", {})
    mock.AddProperties(
        MAIN_IFACE,
        dbus.Dictionary(
            {
                "version": dbus.UInt32(parameters.get("version", 1)),
                "SupportedOptions": dbus.Dictionary(
                    {key: dbus.Array(values, signature="s") for key, values in options.items()}, signature="sv"
                ),
            },
            signature="sv",
        ),
    )
    # Like the portal, replacing by id; RemoveNotification of an id it does not have succeeds.
    # A notification titled "refuse-me" is refused, as the portal refuses a program it does not allow.
    mock.AddMethod(
        MAIN_IFACE, "AddNotification", "sa{sv}", "",
        "if args[1].get('title') == 'refuse-me':\n"
        "    raise dbus.exceptions.DBusException('Showing notifications is not allowed', name='org.freedesktop.portal.Error.NotAllowed')\n"
        "self.shown[args[0]] = args[1]",
    )
    mock.AddMethod(MAIN_IFACE, "RemoveNotification", "s", "", "self.shown.pop(args[0], None)")
    mock.shown = {}
