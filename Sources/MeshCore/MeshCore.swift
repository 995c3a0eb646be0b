/// MeshCore companion radios: PocketMesh's transport over BLE, TCP and serial, the companion
/// protocol session, persistence, and an emulated companion radio inside a simulated mesh.
public enum MeshCoreModule {}
