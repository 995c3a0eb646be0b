// The Tybe module: Protocol/ (planner, frames, status), Client/, Emulator/.
