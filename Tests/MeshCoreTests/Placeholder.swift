import Testing
@testable import MeshCore
