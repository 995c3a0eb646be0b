import ArgumentParser
import Testing
import TetherWorld
@testable import tether

/// The CLI registers every device of the catalog once, under the catalog's id, and the root
/// command and `emulate` offer exactly those.
@Suite struct DeviceRegistryTests {
    @Test func everyCatalogEntryHasOneRegistrationUnderItsId() {
        #expect(CLIDevices.all.map(\.entry.id).sorted() == DeviceCatalog.all.map(\.id).sorted())
        for device in CLIDevices.all {
            if let commands = device.commands {
                #expect(commands.configuration.commandName == device.entry.id)
            }
        }
        var rootNames: [String] = []
        for command in Tether.configuration.subcommands {
            rootNames.append(command.configuration.commandName ?? "")
        }
        for group in CLIDevices.commandGroups {
            #expect(rootNames.contains(group.configuration.commandName ?? ""))
        }
    }

    @Test func emulateTakesTheCatalogsIds() throws {
        #expect(DeviceName.allValueStrings == DeviceCatalog.all.map(\.id))
        for id in DeviceCatalog.all.map(\.id) {
            #expect(try EmulateCommand.parse([id, "--bluez"]).device?.entry.id == id)
        }
        #expect(throws: (any Error).self) { try EmulateCommand.parse(["toaster", "--bluez"]) }
    }
}
