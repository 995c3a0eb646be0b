import Testing

@testable import TetherDBus

@Suite("Signatures and object paths")
struct SignatureTests {
    @Test func parsesEveryBasicType() throws {
        let types = try DBusType.parse("ybnqiuxtdsoghv")
        #expect(types == [.byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string,
                          .objectPath, .signature, .unixFD, .variant])
    }

    @Test func parsesContainers() throws {
        #expect(try DBusType.parse("a{sv}") == [.dictionary(key: .string, value: .variant)])
        #expect(try DBusType.parse("a{oa{sa{sv}}}") == [
            .dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))),
        ])
        #expect(try DBusType.parse("(yx)ai") == [.structure([.byte, .int64]), .array(.int32)])
        #expect(try DBusType.parse("aay") == [.array(.array(.byte))])
        #expect(try DBusType.parse("") == [])
    }

    @Test(arguments: ["s", "a{sv}", "(ybnqiuxtdsogh)", "a(oa{sv})", "aaai", "a{ta(vv)}"])
    func signatureTextRoundTrips(_ text: String) throws {
        #expect(try DBusType.parse(text).map(\.signature).joined() == text)
    }

    @Test(arguments: [
        "a{}", "()", "a{sv", "a{vs}", "a{(i)s}", "a{ass}", "a{sss}", "a{s}", "{sv}", "a", "aa", "(", ")", "(i", "i)",
        "z", "a{sv}}", "v(", "\u{0}",
    ])
    func rejectsInvalidSignatures(_ text: String) {
        #expect(throws: DBusDecodingError.self) { try DBusType.parse(text) }
    }

    @Test func enforcesTheLengthLimit() throws {
        #expect(try DBusType.parse(String(repeating: "y", count: 255)).count == 255)
        #expect(throws: DBusDecodingError.self) { try DBusType.parse(String(repeating: "y", count: 256)) }
    }

    @Test func enforcesTheArrayNestingLimit() throws {
        let deepest = String(repeating: "a", count: 32) + "y"
        var expected = DBusType.byte
        for _ in 0..<32 { expected = .array(expected) }
        #expect(try DBusType.parse(deepest) == [expected])
        #expect(throws: DBusDecodingError.self) { try DBusType.parse(String(repeating: "a", count: 33) + "y") }
    }

    @Test func enforcesTheStructureNestingLimit() throws {
        let deepest = String(repeating: "(", count: 32) + "y" + String(repeating: ")", count: 32)
        #expect(try DBusType.parse(deepest).count == 1)
        let tooDeep = String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33)
        #expect(throws: DBusDecodingError.self) { try DBusType.parse(tooDeep) }
    }

    @Test func parseSingleWantsExactlyOneType() throws {
        #expect(try DBusType.parseSingle("a{sv}") == .dictionary(key: .string, value: .variant))
        #expect(throws: DBusDecodingError.self) { try DBusType.parseSingle("ii") }
        #expect(throws: DBusDecodingError.self) { try DBusType.parseSingle("") }
    }

    @Test func alignments() {
        #expect(DBusType.byte.alignment == 1)
        #expect(DBusType.signature.alignment == 1)
        #expect(DBusType.variant.alignment == 1)
        #expect(DBusType.int16.alignment == 2)
        #expect(DBusType.boolean.alignment == 4)
        #expect(DBusType.array(.int64).alignment == 4)
        #expect(DBusType.dictionary(key: .string, value: .variant).alignment == 4)
        #expect(DBusType.int64.alignment == 8)
        #expect(DBusType.double.alignment == 8)
        #expect(DBusType.structure([.byte]).alignment == 8)
    }

    @Test func basicTypes() {
        #expect(DBusType.unixFD.isBasic)
        #expect(DBusType.signature.isBasic)
        #expect(!DBusType.variant.isBasic)
        #expect(!DBusType.array(.byte).isBasic)
        #expect(!DBusType.structure([.byte]).isBasic)
    }

    // MARK: Object paths

    @Test(arguments: ["/", "/a", "/org/bluez/hci0", "/A_b/c9/_", "/dev_00_11_22_33_44_55"])
    func acceptsValidPaths(_ text: String) {
        #expect(DBusObjectPath(text)?.rawValue == text)
    }

    @Test(arguments: ["", "a", "a/b", "//", "/a/", "/a//b", "/a-b", "/a.b", "/é", "/a b", "/a/\u{0}"])
    func rejectsInvalidPaths(_ text: String) {
        #expect(DBusObjectPath(text) == nil)
    }

    @Test func pathNavigation() {
        let path: DBusObjectPath = "/org/bluez/hci0"
        #expect(path.parent == "/org/bluez")
        let org: DBusObjectPath = "/org"
        #expect(org.parent == .root)
        #expect(DBusObjectPath.root.parent == nil)
        #expect(path.lastElement == "hci0")
        #expect(DBusObjectPath.root.lastElement == "")
        #expect(DBusObjectPath.root.appending("a") == "/a")
        #expect(path.appending("dev_1") == "/org/bluez/hci0/dev_1")
        #expect(path.appending("bad-element") == nil)
        #expect(path.appending("") == nil)
        #expect(path.isDescendant(of: "/org/bluez"))
        #expect(path.isDescendant(of: path))
        #expect(path.isDescendant(of: .root))
        #expect(!path.isDescendant(of: "/org/blue"))
        #expect(!DBusObjectPath("/org/bluez2").isDescendant(of: "/org/bluez"))
    }
}
