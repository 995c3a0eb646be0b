/// What `tether mesh` understands: every command of its prompt, scripts and subcommands, with
/// the help and completion they get.
enum MeshShellCatalog {
    /// What a command's first argument names, for completion.
    enum Argument {
        case none, contact, setting, statsKind, anonymousKind, channel
    }

    /// One command.
    struct Entry {
        let name: String
        let usage: String
        let summary: String
        let argument: Argument
    }

    static let entries: [Entry] = [
        Entry(name: "help", usage: "help [COMMAND]", summary: "List the commands, or explain one.", argument: .none),
        Entry(name: "info", usage: "info", summary: "The radio's identity, radio settings and firmware.", argument: .none),
        Entry(name: "contacts", usage: "contacts [TEXT]", summary: "The radio's contacts (those whose name contains TEXT).", argument: .none),
        Entry(name: "send", usage: "send NAME TEXT…", summary: "Send a direct message and wait for its acknowledgement.", argument: .contact),
        Entry(name: "to", usage: "to NAME | to #INDEX | to -", summary: "Chat with a contact or channel: lines without a leading / are sent to it (- ends the chat).", argument: .contact),
        Entry(name: "channels", usage: "channels", summary: "The radio's channels.", argument: .none),
        Entry(name: "channel", usage: "channel INDEX TEXT…", summary: "Send a message on a channel (0 is Public).", argument: .channel),
        Entry(name: "channel-set", usage: "channel-set INDEX NAME [SECRET]", summary: "Set a channel: a #name derives its secret; otherwise give 32 hex digits.", argument: .channel),
        Entry(name: "channel-remove", usage: "channel-remove INDEX", summary: "Clear a channel slot.", argument: .channel),
        Entry(name: "messages", usage: "messages [COUNT]", summary: "The newest stored messages (20 by default).", argument: .none),
        Entry(name: "advert", usage: "advert [flood]", summary: "Send the radio's advert to neighbours, or flood it.", argument: .none),
        Entry(name: "battery", usage: "battery", summary: "Battery voltage and storage use.", argument: .none),
        Entry(name: "time", usage: "time [set]", summary: "The radio's clock; set sets it to this computer's time.", argument: .none),
        Entry(name: "stats", usage: "stats [core|radio|packets]", summary: "The radio's statistics.", argument: .statsKind),
        Entry(name: "get", usage: "get [SETTING]", summary: "One setting, or all of them (custom variables too).", argument: .setting),
        Entry(name: "set", usage: "set SETTING VALUE", summary: "Change a setting (see get for the names).", argument: .setting),
        Entry(name: "path", usage: "path NAME", summary: "The route to a contact and the route of its last advert.", argument: .contact),
        Entry(name: "reset-path", usage: "reset-path NAME", summary: "Forget the route to a contact: messages flood until a new one is found.", argument: .contact),
        Entry(name: "discover-path", usage: "discover-path NAME", summary: "Find the routes to and from a node.", argument: .contact),
        Entry(name: "trace", usage: "trace NAME|HEX…", summary: "Trace a route of repeaters (names, or their key hashes in hex): the SNR at each hop.", argument: .contact),
        Entry(name: "login", usage: "login NAME PASSWORD", summary: "Log in to a repeater, room server or sensor.", argument: .contact),
        Entry(name: "logout", usage: "logout NAME", summary: "Log out of a repeater, room server or sensor.", argument: .contact),
        Entry(name: "status", usage: "status NAME", summary: "A repeater's or room server's status (log in first).", argument: .contact),
        Entry(name: "telemetry", usage: "telemetry [NAME]", summary: "A node's telemetry, or the radio's own.", argument: .contact),
        Entry(name: "neighbours", usage: "neighbours NAME", summary: "The repeaters a repeater hears directly.", argument: .contact),
        Entry(name: "mma", usage: "mma NAME [HOURS]", summary: "A sensor's minimum, maximum and average readings over the last hours (1 by default).", argument: .contact),
        Entry(name: "acl", usage: "acl NAME", summary: "A server's access list (administrators).", argument: .contact),
        Entry(name: "owner", usage: "owner NAME", summary: "A repeater's firmware, name and owner.", argument: .contact),
        Entry(name: "anon", usage: "anon NAME regions|owner|clock", summary: "Ask a repeater without logging in (it must be reachable along a path).", argument: .contact),
        Entry(name: "cmd", usage: "cmd NAME COMMAND…", summary: "Run a command on a repeater or room server (log in as administrator first).", argument: .contact),
        Entry(name: "discover", usage: "discover [repeaters|sensors|all]", summary: "Ask the nodes next door to answer.", argument: .none),
        Entry(name: "card", usage: "card", summary: "The radio's own contact card (meshcore://…).", argument: .none),
        Entry(name: "export", usage: "export NAME", summary: "A contact's card (meshcore://…), as the radio last heard it.", argument: .contact),
        Entry(name: "import", usage: "import LINK", summary: "Add what a meshcore:// link shares: a card, a contact or a channel.", argument: .none),
        Entry(name: "favourite", usage: "favourite NAME on|off", summary: "Mark a contact as a favourite (never overwritten when the table is full), or not.", argument: .contact),
        Entry(name: "set-path", usage: "set-path NAME HASH,HASH…|flood", summary: "Set the route to a contact (repeater hashes in hex, 1–3 bytes each), or make it flood.", argument: .contact),
        Entry(name: "remove", usage: "remove NAME", summary: "Remove a contact from the radio.", argument: .contact),
        Entry(name: "sign", usage: "sign TEXT", summary: "Sign TEXT with the radio's key (Ed25519, hex).", argument: .none),
        Entry(name: "private-key", usage: "private-key", summary: "Export the radio's private key (whoever has it is this node).", argument: .none),
        Entry(name: "reboot", usage: "reboot", summary: "Reboot the radio.", argument: .none),
        Entry(name: "factory-reset", usage: "factory-reset yes", summary: "Erase the radio's identity, contacts, channels and settings, then reboot.", argument: .none),
        Entry(name: "wait", usage: "wait SECONDS", summary: "Pause a script while messages and answers arrive (at most 600 s).", argument: .none),
        Entry(name: "quit", usage: "quit", summary: "Leave (also exit, or end of input).", argument: .none),
    ]

    /// The entry named `name` (or an alias: `exit`, `neighbors`, `?`).
    static func entry(_ name: String) -> Entry? {
        let canonical = switch name.lowercased() {
        case "exit": "quit"
        case "neighbors": "neighbours"
        case "?": "help"
        default: name.lowercased()
        }
        return entries.first { $0.name == canonical }
    }

    /// The settings `get` and `set` know (custom variables come on top).
    static let settings: [(name: String, summary: String)] = [
        ("name", "the advertised name"),
        ("tx", "transmit power, dBm"),
        ("radio", "frequency MHz,bandwidth kHz,spreading factor,coding rate"),
        ("repeat", "on/off: repeat others' packets (on an allowed frequency)"),
        ("lat", "advertised latitude"), ("lon", "advertised longitude"),
        ("tuning", "receive delay base,airtime factor"),
        ("manual_add", "on/off: new nodes wait to be added"),
        ("autoadd", "kinds added in manual mode: chat,repeater,room,sensor,overwrite (or none)"),
        ("autoadd_max_hops", "0 any distance, 1 zero-hop only, N up to N-1 hops"),
        ("telemetry_base", "deny/flags/all"), ("telemetry_location", "deny/flags/all"), ("telemetry_environment", "deny/flags/all"),
        ("share_location", "on/off: adverts carry the position"),
        ("multi_acks", "extra acknowledgements per message"),
        ("path_hash_mode", "0, 1, 2: 1-, 2-, 3-byte hop hashes"),
        ("pin", "the BLE PIN (six digits, 0 for the default)"),
        ("default_scope", "the flood scope kept across reboots (a region, or - for none)"),
        ("scope", "this session's flood scope: a region, default, or none (set only)"),
        ("repeat_frequencies", "the frequencies the radio may repeat on (get only)"),
    ]
}
