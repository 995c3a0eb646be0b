# Sourced by scripts/test and scripts/test-tsan: the suites that run on real time (a D-Bus
# daemon, bluezoo, TCP and serial hosts, the Python peers, the device catalog), as a swift test
# filter. They run in a process of their own, apart from the virtual-time suites.
real_time='TetherBlueZTests|TetherDBusTests|TetherStudioTests|DeviceKitTests\.DeviceCatalogTests|MeshCoreTests\.(InteropTests|CLIInteropTests|EmulatorStreamHostTests|StreamBoundsTests|TransportStreamEndToEndTests)'
