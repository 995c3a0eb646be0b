// The FlockFinder module: Protocol/, Store/, Client/, Emulator/.
