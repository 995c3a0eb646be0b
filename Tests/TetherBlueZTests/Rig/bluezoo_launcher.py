#!/usr/bin/env python3
"""A private system bus with bluezoo owning org.bluez, driven over stdin/stdout.

Run as `.venv/bin/python Tests/TetherBlueZTests/Rig/bluezoo_launcher.py [options]`
(`./scripts/test-peers` installs bluezoo 1.0.2 into .venv). See README.md next to this file.

Protocol (stdout is the protocol and nothing else; every log goes to stderr):

    ADDRESS <address>          once, as soon as the private dbus-daemon listens
    READY                      once, when org.bluez is owned and the -a adapters exist, powered

then one command per stdin line, each answered by exactly one stdout line, in order:

    add-adapter <id> <address> -> OK add-adapter <id> <address>   (hci<id>, powered)
    remove-adapter <id>        -> OK remove-adapter <id>
    power <id> on|off          -> OK power <id> on|off             (Adapter1.Powered)
    stop-bluez                 -> OK stop-bluez    (org.bluez has no owner; the bus stays)
    start-bluez                -> OK start-bluez   (org.bluez owned again, the same adapters, powered)
    ping                       -> OK ping
    anything failing           -> ERR <command>: <reason>

Blank lines are ignored. stop-bluez and start-bluez are idempotent. stdin EOF, SIGTERM, SIGINT or
SIGHUP end bluezoo and the dbus-daemon; both children also die with the launcher (PR_SET_PDEATHSIG).

Process layout: this script is a supervisor. It runs `dbus-daemon` and runs bluezoo in a child
process (this script again, with --child), so that stop-bluez/start-bluez are a real bluetoothd
exit and restart: the child releases org.bluez and exits, which drops every object it exported
(clients see NameOwnerChanged only, as when bluetoothd dies); start-bluez starts a fresh child.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ADDRESS_RE = re.compile(r"^(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$")

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:dir={directory}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
"""


def log(message: str) -> None:
    print(f"bluezoo-launcher[{os.getpid()}]: {message}", file=sys.stderr, flush=True)


def adapter_spec(text: str) -> tuple[int, str]:
    """`ADDRESS` (ids are then given in order) or `ID=ADDRESS`."""
    ident, _, address = text.rpartition("=")
    if not ADDRESS_RE.match(address):
        raise argparse.ArgumentTypeError(f"invalid Bluetooth address {address!r}")
    if ident == "":
        return (-1, address.upper())
    if not ident.isdigit() or int(ident) > 255:
        raise argparse.ArgumentTypeError(f"invalid adapter id {ident!r}")
    return (int(ident), address.upper())


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-a", "--adapter", dest="adapters", action="append", default=[],
                        type=adapter_spec, metavar="[ID=]ADDRESS",
                        help="an adapter (hci0, hci1, ... in order unless ID= is given)")
    parser.add_argument("--adapter-delay", type=float, default=0.1,
                        help="seconds between taking org.bluez and adding the adapters (bluetoothd's order)")
    parser.add_argument("--scan-interval", type=float, default=1.0,
                        help="seconds between two simulated scans (default 1; >= 0.05)")
    parser.add_argument("--ready-timeout", type=float, default=20.0,
                        help="seconds to wait for bluezoo to own org.bluez (default 20)")
    parser.add_argument("--command-timeout", type=float, default=10.0,
                        help="seconds bluezoo has to answer a command (default 10)")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more bluezoo logging (-v: every scan too, -vv: debug)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scan_interval < 0.05:
        parser.error("--scan-interval must be at least 0.05")
    ids: list[tuple[int, str]] = []
    next_id = 0
    for ident, address in args.adapters:
        if ident < 0:
            ident = next_id
        if any(ident == i for i, _ in ids):
            parser.error(f"adapter id {ident} given twice")
        ids.append((ident, address))
        next_id = ident + 1
    args.adapters = ids
    return args


def die_with_parent(sig: int):
    """A preexec_fn: the kernel sends `sig` to the child when this process dies."""
    def preexec() -> None:
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        except Exception:
            pass  # Not Linux: stdin EOF and the cleanup path still apply.
    return preexec


class LineReader:
    """Lines from a pipe, with deadlines (select + os.read, no threads)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer = b""
        self.eof = False

    def pop_line(self) -> str | None:
        """A complete buffered line (at EOF also the unterminated rest), or None."""
        if b"\n" in self.buffer:
            line, _, self.buffer = self.buffer.partition(b"\n")
            return line.decode(errors="replace").rstrip("\r")
        if self.eof and self.buffer:
            line, self.buffer = self.buffer, b""
            return line.decode(errors="replace")
        return None

    def fill(self) -> None:
        """One read(2) into the buffer (blocks unless the fd is readable)."""
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.eof = True
        self.buffer += chunk

    def readline(self, timeout: float | None) -> str | None:
        """The next line without its newline; None at EOF; raises TimeoutError."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            line = self.pop_line()
            if line is not None or self.eof:
                return line
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                self.fill()


class Terminate(Exception):
    pass


# --------------------------------------------------------------------------------------------
# Supervisor
# --------------------------------------------------------------------------------------------

class Supervisor:

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.tmpdir = ""
        self.daemon: subprocess.Popen | None = None
        self.address = ""
        self.child: subprocess.Popen | None = None
        self.child_out: LineReader | None = None
        # The adapters bluezoo had when it last answered (id -> address).
        self.adapters: dict[int, str] = dict(args.adapters)

    # -- output ------------------------------------------------------------------------------

    @staticmethod
    def emit(line: str) -> None:
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            raise Terminate("stdout closed")

    # -- dbus-daemon -------------------------------------------------------------------------

    def start_daemon(self) -> None:
        base = tempfile.gettempdir()
        if len(base) > 60:  # sun_path is 108 bytes
            base = "/tmp"
        # The config lives in a private directory removed as soon as the daemon has read it; the
        # socket (/tmp/dbus-XXXXXXXXXX) is removed by dbus-daemon itself when it exits, which it
        # does even if this process is killed (PR_SET_PDEATHSIG): nothing is left behind.
        self.tmpdir = tempfile.mkdtemp(prefix="tether-bluezoo-", dir=base)
        config = os.path.join(self.tmpdir, "bus.conf")
        with open(config, "w") as f:
            f.write(BUS_CONFIG.format(directory=base))
        daemon = shutil.which("dbus-daemon")
        if daemon is None:
            raise RuntimeError("dbus-daemon is not installed: run ./scripts/test-peers")
        self.daemon = subprocess.Popen(
            [daemon, f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=None,
            preexec_fn=die_with_parent(signal.SIGTERM))
        reader = LineReader(self.daemon.stdout.fileno())
        try:
            address = reader.readline(timeout=10)
        except TimeoutError:
            raise RuntimeError("dbus-daemon printed no address within 10 s")
        if not address:
            raise RuntimeError(f"dbus-daemon exited ({self.daemon.wait()}) without an address")
        self.address = address.strip()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        self.tmpdir = ""

    # -- bluezoo child -----------------------------------------------------------------------

    def child_running(self) -> bool:
        return self.child is not None and self.child.poll() is None

    def start_child(self) -> None:
        command = [sys.executable, os.path.abspath(__file__), "--child",
                   "--scan-interval", str(self.args.scan_interval),
                   "--adapter-delay", str(self.args.adapter_delay)]
        command += ["-v"] * self.args.verbose
        for ident, address in sorted(self.adapters.items()):
            command += ["-a", f"{ident}={address}"]
        env = dict(os.environ)
        env["DBUS_SYSTEM_BUS_ADDRESS"] = self.address
        env["PYTHONUNBUFFERED"] = "1"
        started = time.monotonic()
        self.child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, env=env,
            preexec_fn=die_with_parent(signal.SIGKILL))
        self.child_out = LineReader(self.child.stdout.fileno())
        try:
            line = self.child_out.readline(timeout=self.args.ready_timeout)
        except TimeoutError:
            self.kill_child()
            raise RuntimeError(f"bluezoo did not own org.bluez within {self.args.ready_timeout} s")
        if line != "READY":
            self.kill_child()
            if line is None:
                raise RuntimeError("bluezoo exited before owning org.bluez (see its log above)")
            raise RuntimeError(f"bluezoo failed to start: {line}")
        log(f"bluezoo (pid {self.child.pid}) owns org.bluez with "
            f"{', '.join(f'hci{i}' for i in sorted(self.adapters)) or 'no adapters'} "
            f"after {1000 * (time.monotonic() - started):.0f} ms")

    def watch_child(self) -> None:
        """bluezoo wrote while no command was in flight: it died, or said something stray."""
        self.child_out.fill()
        while (line := self.child_out.pop_line()) is not None:
            log(f"unexpected output from bluezoo: {line!r}")
        if self.child_out.eof:
            code = self.child.wait()
            log(f"bluezoo exited unexpectedly (status {code}); org.bluez has no owner now")
            self.kill_child()

    def kill_child(self) -> None:
        child, self.child = self.child, None
        if child is None:
            return
        try:
            child.stdin.close()
        except OSError:
            pass
        try:
            child.wait(timeout=2)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        child.stdout.close()

    def ask_child(self, command: str) -> str:
        """Sends one line to bluezoo and returns its one-line answer."""
        assert self.child is not None and self.child_out is not None
        try:
            self.child.stdin.write((command + "\n").encode())
            self.child.stdin.flush()
            line = self.child_out.readline(timeout=self.args.command_timeout)
        except TimeoutError:
            log(f"bluezoo did not answer {command!r} within {self.args.command_timeout} s; "
                "killing it")
            self.kill_child()
            return f"ERR {command}: bluezoo did not answer within {self.args.command_timeout} s " \
                   "(it was stopped; start-bluez starts it again)"
        except BrokenPipeError:
            line = None
        if line is None:
            code = self.child.wait()
            self.kill_child()
            log(f"bluezoo exited unexpectedly (status {code})")
            return f"ERR {command}: bluezoo exited unexpectedly (status {code}; see its log)"
        return line

    # -- commands ----------------------------------------------------------------------------

    def handle(self, line: str) -> str:
        words = line.split()
        command = " ".join(words)
        name = words[0]
        if name == "ping":
            if len(words) != 1:
                return f"ERR {command}: usage: ping"
            return self.forward(command) if self.child_running() else f"OK {command}"
        if name in ("add-adapter", "remove-adapter", "power"):
            if not self.child_running():
                return f"ERR {command}: bluez is stopped (start-bluez first)"
            reply = self.forward(command)
            if reply.startswith("OK ") and name == "add-adapter":
                self.adapters[int(words[1])] = words[2].upper()
            if reply.startswith("OK ") and name == "remove-adapter":
                self.adapters.pop(int(words[1]), None)
            return reply
        if name == "stop-bluez":
            if len(words) != 1:
                return f"ERR {command}: usage: stop-bluez"
            if self.child_running():
                reply = self.ask_child("quit")
                if not reply.startswith("OK quit"):
                    self.kill_child()
                    return f"ERR {command}: {reply}"
                self.adapters = parse_adapter_list(reply[len("OK quit"):])
                self.kill_child()
            return f"OK {command}"
        if name == "start-bluez":
            if len(words) != 1:
                return f"ERR {command}: usage: start-bluez"
            if not self.child_running():
                try:
                    self.start_child()
                except RuntimeError as error:
                    return f"ERR {command}: {error}"
            return f"OK {command}"
        return f"ERR {command}: unknown command (add-adapter, remove-adapter, power, " \
               "stop-bluez, start-bluez, ping)"

    def forward(self, command: str) -> str:
        reply = self.ask_child(command)
        if reply.startswith("OK ") or reply.startswith("ERR "):
            return reply
        return f"ERR {command}: unexpected answer from bluezoo: {reply!r}"

    # -- main --------------------------------------------------------------------------------

    def run(self) -> int:
        stdin = LineReader(sys.stdin.fileno())
        try:
            self.start_daemon()
            self.emit(f"ADDRESS {self.address}")
            self.start_child()
            self.emit("READY")
            while True:
                line = stdin.pop_line()
                if line is not None:
                    if line.strip():
                        self.emit(self.handle(line.strip()))
                    continue
                if stdin.eof:
                    return 0
                # Idle: wait for a command, and notice at once if bluezoo dies meanwhile.
                watched = [stdin.fd]
                if self.child is not None:
                    watched.append(self.child_out.fd)
                ready, _, _ = select.select(watched, [], [])
                if self.child is not None and self.child_out.fd in ready:
                    self.watch_child()
                if stdin.fd in ready:
                    stdin.fill()
        except Terminate:
            return 0
        except RuntimeError as error:
            log(f"error: {error}")
            return 1
        finally:
            self.cleanup()

    def cleanup(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        self.kill_child()
        if self.daemon is not None:
            self.daemon.terminate()
            try:
                self.daemon.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
            self.daemon = None
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = ""


def parse_adapter_list(text: str) -> dict[int, str]:
    adapters = {}
    for item in text.split():
        ident, _, address = item.partition("=")
        adapters[int(ident)] = address
    return adapters


BLUEZOO_VERSION = "1.0.2"  # The patches are written against this version.


def supervisor_main(args: argparse.Namespace) -> int:
    from importlib import metadata
    try:
        version = metadata.version("bluezoo")
    except metadata.PackageNotFoundError:
        log(f"bluezoo is not installed for {sys.executable}: run ./scripts/test-peers")
        return 2
    if version != BLUEZOO_VERSION:
        log(f"bluezoo {version} is installed for {sys.executable}, the launcher patches "
            f"{BLUEZOO_VERSION}: run ./scripts/test-peers")
        return 2
    def on_signal(signum, frame):
        raise Terminate(signal.Signals(signum).name)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    return Supervisor(args).run()


# --------------------------------------------------------------------------------------------
# Child: bluezoo with the patches
# --------------------------------------------------------------------------------------------

REASON_MESSAGES = {
    "org.bluez.Reason.Local": "Connection terminated by local host",
    "org.bluez.Reason.Remote": "Connection terminated by remote user",
}
GATT_CHARACTERISTIC = "org.bluez.GattCharacteristic1"


def apply_patches():
    """Patches bluezoo 1.0.2; returns the modules the child needs. See README.md."""
    import logging

    import sdbus

    patch_log = logging.getLogger("tether-rig")

    # (a) Signatures. sdbus copies a property (with its signature) into every class that
    # overrides it when that class is created, so the interface classes must be patched before
    # bluezoo.device / bluezoo.adv / bluezoo.gatt are imported; checked again below.
    from bluezoo.interfaces.Device import DeviceInterface
    from bluezoo.interfaces.LEAdvertisement import LEAdvertisementInterface
    signatures = {
        (DeviceInterface, "ManufacturerData"): "a{qv}",
        (DeviceInterface, "AdvertisingData"): "a{yv}",
        (LEAdvertisementInterface, "ManufacturerData"): "a{qv}",
        (LEAdvertisementInterface, "ScanResponseManufacturerData"): "a{qv}",
        (LEAdvertisementInterface, "Data"): "a{yv}",
        (LEAdvertisementInterface, "ScanResponseData"): "a{yv}",
    }
    for (cls, name), signature in signatures.items():
        cls.__dict__[name].property_signature = signature

    from bluezoo import bluezoo as bluezoo_main
    from bluezoo import events
    from bluezoo.adapter import Adapter
    from bluezoo.adv import LEAdvertisementClient
    from bluezoo.device import Device
    from bluezoo.exceptions import (DBusBluezAlreadyExistsError, DBusBluezFailedError,
                                    DBusBluezInProgressError, DBusBluezNotReadyError)
    from bluezoo.gatt import GattCharacteristicClientLink
    from bluezoo.root import AgentClient, RootManager
    from bluezoo.utils import create_background_task

    for cls, name, signature in ((Device, "ManufacturerData", "a{qv}"),
                                 (Device, "AdvertisingData", "a{yv}"),
                                 (LEAdvertisementClient, "ManufacturerData", "a{qv}"),
                                 (LEAdvertisementClient, "ScanResponseManufacturerData", "a{qv}")):
        member = getattr(cls, name)
        if member.property_signature != signature:
            raise RuntimeError(f"patch (a) lost: {cls.__name__}.{name} is "
                               f"{member.property_signature}, not {signature}")

    def dbus_method(cls, name):
        """Replaces the Python body of an exported D-Bus method (sdbus calls `original_method`)."""
        member = cls.__dict__[name]

        def install(function):
            async def wrapper(self, *args):
                try:
                    return await function(self, *args)
                except sdbus.SdBusBaseError:
                    raise
                except Exception:
                    patch_log.exception(f"{cls.__name__}.{name}")
                    raise
            wrapper.__name__ = name
            member.original_method = wrapper
            return function
        return install

    def emit_changed(obj, interface: str, name: str, signature: str, value) -> None:
        obj.properties_changed.emit((interface, {name: (signature, value)}, []))

    # (b)/(c)/(d) Connections. ---------------------------------------------------------------

    original_connect = Device.connect

    def peer_path(device) -> str:
        return f"{device.peer_adapter.get_object_path()}/dev_{device.adapter.address.replace(':', '_')}"

    def adapter_alive(adapter) -> bool:
        return adapter.mock.adapters.get(adapter.id) is adapter

    async def connect(self, uuid=None):
        if not self.adapter.powered or not adapter_alive(self.adapter):
            raise DBusBluezNotReadyError("Resource Not Ready")
        if not self.peer_adapter.powered or not adapter_alive(self.peer_adapter):
            raise DBusBluezFailedError("le-connection-abort-by-local")
        if self.connected:
            return  # (c) BlueZ answers a Connect on a connected LE device at once.
        # The peer adapter may already export a device for us (it scanned us): use that one.
        existing = self.peer_adapter.devices.get(peer_path(self))
        if existing is not None:
            self.peer = existing
        await original_connect(self, uuid)
        # Adapter.add_device gave our peer a fresh, unexported `peer`; link it back to us so a
        # Disconnect on the peer side (or its adapter going away) reaches this side too.
        if self.peer is not None:
            self.peer.peer = self

    def end_notify_session(link) -> None:
        """Forget `link`'s notify session; stop the app's notifications if it was the last."""
        if getattr(link, "tether_notifying", False):
            link.client_props_changed_subscription.unsubscribe()
            link.tether_notifying = False
            sessions = link.client.__dict__.setdefault("tether_notify_links", set())
            sessions.discard(link)
            if not sessions and link.client.NotifyAcquired.get() is None:
                async def stop():
                    try:
                        await link.client.StopNotify()
                    except Exception as error:
                        patch_log.info(f"StopNotify on the app after a disconnect: {error}")
                create_background_task(stop())
        if link.f_read is not None:
            try:
                import asyncio
                asyncio.get_running_loop().remove_reader(link.f_read.fileno())
            except Exception:
                pass
            link.f_read.close()
            link.f_read = None
        if link.f_write is not None:
            link.f_write.close()
            link.f_write = None

    async def disconnect(self, uuid=None, reason="org.bluez.Reason.Local"):
        self.connecting_task.cancel()
        sides = [(self, reason)]
        if self.peer is not None:
            sides.append((self.peer, "org.bluez.Reason.Remote"
                          if reason == "org.bluez.Reason.Local" else reason))
        if not any(side.connected or side.services for side, _ in sides):
            return  # Not connected: BlueZ answers at once and signals nothing.
        for side, _ in sides:
            if side.services_resolved:
                await side.ServicesResolved.set_async(False)
        for side, _ in sides:
            # Children first (desc, char, then service), as BlueZ clears an unbonded
            # device's GATT database.
            for path in sorted(side.services, reverse=True):
                link = side.services[path]
                if isinstance(link, GattCharacteristicClientLink):
                    end_notify_session(link)
                try:
                    side.peer_adapter.mock.remove_object(link)
                except KeyError:
                    pass  # Already gone.
            side.services.clear()
        for side, side_reason in sides:
            if side.connected:
                side.Disconnected.emit((side_reason, REASON_MESSAGES.get(side_reason, "Unspecified")))
                await side.Connected.set_async(False)
        patch_log.info(f"Disconnected {self} from {self.adapter} ({reason})")

    Device.connect = connect
    Device.disconnect = disconnect

    # (e) Notifications. ---------------------------------------------------------------------

    original_start_notify = GattCharacteristicClientLink.__dict__["StartNotify"].original_method
    original_read_value = GattCharacteristicClientLink.__dict__["ReadValue"].original_method
    original_write_value = GattCharacteristicClientLink.__dict__["WriteValue"].original_method

    # (j) ATT errors cross the air as with bluetoothd on both sides: the application's D-Bus
    # error becomes an ATT code (`dbus_error_to_att_ecode`, src/gatt-database.c: Failed "0x80"…
    # "0x9F" → that code, other Failed → 0x80, NotPermitted → read/write not permitted), and the
    # central's bluetoothd names that code (`create_gatt_dbus_error`, src/gatt-client.c).
    # bluezoo forwarded the application's error verbatim, which no real stack does.
    from bluezoo import exceptions as bz

    def error_parts(error):
        if isinstance(error, sdbus.SdBusUnmappedMessageError):
            name = error.args[0] if error.args else "org.freedesktop.DBus.Error.Failed"
            message = error.args[1] if len(error.args) > 1 else ""
        else:
            name = getattr(type(error), "dbus_error_name", "org.freedesktop.DBus.Error.Failed")
            message = error.args[0] if error.args else ""
        return str(name), str(message)

    def application_att_code(error, permission_code):
        name, message = error_parts(error)
        if name == "org.bluez.Error.Failed":
            # Newer bluetoothd reads the message as a number: an application error 0x80-0x9F
            # is kept, another number is "unlikely" (0x0E), text is 0x80.
            match = re.fullmatch(r"\s*0x([0-9a-fA-F]+)\s*", message)
            if not match:
                return 0x80
            code = int(match.group(1), 16)
            return code if 0x80 <= code <= 0x9F else 0x0E
        return {"org.bluez.Error.NotSupported": 0x06, "org.bluez.Error.NotAuthorized": 0x08,
                "org.bluez.Error.InvalidValueLength": 0x0D, "org.bluez.Error.InvalidOffset": 0x07,
                "org.bluez.Error.InProgress": 0xFE,
                "org.bluez.Error.NotPermitted": permission_code}.get(name, 0x0E)

    def central_error(code):
        if code == 0x02:
            return bz.DBusBluezNotPermittedError("Read not permitted")
        if code == 0x03:
            return bz.DBusBluezNotPermittedError("Write not permitted")
        if code in (0x05, 0x0C, 0x0F):
            return bz.DBusBluezNotPermittedError("Not paired")
        if code == 0x07:
            return bz.DBusBluezInvalidArgumentsError("Invalid offset")
        if code == 0x0D:
            return bz.DBusBluezInvalidArgumentsError("Invalid Length")
        if code == 0x08:
            return bz.DBusBluezNotAuthorizedError("Operation Not Authorized")
        if code == 0x06:
            return bz.DBusBluezNotSupportedError("Operation is not supported")
        return bz.DBusBluezFailedError(f"Operation failed with ATT error: 0x{code:02x}")

    async def over_the_air(call, permission_code):
        try:
            return await call()
        except sdbus.SdBusBaseError as error:
            if isinstance(error, (bz.DBusBluezNotConnectedError,)):
                raise
            raise central_error(application_att_code(error, permission_code)) from None

    @dbus_method(GattCharacteristicClientLink, "WriteValue")
    async def write_value(self, value, options):
        kind = options.get("type", ("s", "request"))
        if (kind[1] if isinstance(kind, tuple) else kind) == "command":
            # A Write Command has no response on the air: the application's error stays there.
            try:
                return await original_write_value(self, value, options)
            except sdbus.SdBusBaseError as error:
                patch_log.info(f"write command refused by the application (the central never knows): {error_parts(error)}")
                return None
        return await over_the_air(lambda: original_write_value(self, value, options), 0x03)
    original_stop_notify = GattCharacteristicClientLink.__dict__["StopNotify"].original_method

    @dbus_method(GattCharacteristicClientLink, "StartNotify")
    async def start_notify(self):
        if getattr(self, "tether_notifying", False):
            return  # BlueZ: a client's second StartNotify succeeds without a new session.
        client = self.client
        if client.NotifyAcquired.get() is not None:
            # The app implements AcquireNotify: bluezoo reads its fd (kept as is).
            await original_start_notify(self)
        else:
            async def on_properties_changed(properties):
                if "Value" in properties and getattr(self, "tether_notifying", False):
                    await self.Value.set_async(properties["Value"])
                    if "indicate" in client.Flags.get([]):
                        await client.Confirm()  # BlueZ confirms indications only.

            sessions = client.__dict__.setdefault("tether_notify_links", set())
            self.client_props_changed_subscription = events.subscribe(
                f"properties:changed:{id(client)}", on_properties_changed)
            if not sessions:  # The first session starts the app's notifications.
                try:
                    await over_the_air(client.StartNotify, 0x03)
                except BaseException:
                    self.client_props_changed_subscription.unsubscribe()
                    raise
            sessions.add(self)
        self.tether_notifying = True
        emit_changed(self, GATT_CHARACTERISTIC, "Notifying", "b", True)

    @dbus_method(GattCharacteristicClientLink, "StopNotify")
    async def stop_notify(self):
        if not getattr(self, "tether_notifying", False):
            raise DBusBluezFailedError("No notify session started")
        client = self.client
        if client.NotifyAcquired.get() is not None:
            await original_stop_notify(self)
            self.tether_notifying = False
        else:
            self.client_props_changed_subscription.unsubscribe()
            self.tether_notifying = False
            sessions = client.__dict__.setdefault("tether_notify_links", set())
            sessions.discard(self)
            if not sessions:
                await client.StopNotify()
        emit_changed(self, GATT_CHARACTERISTIC, "Notifying", "b", False)

    # (i) A read updates the central's cached Value and emits it *before* the reply, as
    # bluetoothd does (`chrc_read_cb` → `write_characteristic_cb`): drivers must not report
    # the read twice. bluezoo replied without touching Value.
    @dbus_method(GattCharacteristicClientLink, "ReadValue")
    async def read_value(self, options):
        prepared = {**options}
        value = await over_the_air(lambda: original_read_value(self, prepared), 0x02)
        await self.Value.set_async(value)
        return value

    # The central's Notifying is its own session state (the app's flag was shown before).
    GattCharacteristicClientLink.__dict__["Notifying"].property_getter = \
        lambda self: bool(getattr(self, "tether_notifying", False))

    # (f) Discovery: per client, as BlueZ. -----------------------------------------------------

    async def stop_discovering(self):
        self.discovering_task.cancel()
        if self.discovering:
            await self.Discovering.set_async(False)
    Adapter._Adapter__stop_discovering = stop_discovering

    @dbus_method(Adapter, "StartDiscovery")
    async def start_discovery(self):
        sender = sdbus.get_current_message().sender
        if not self.powered:
            raise DBusBluezNotReadyError("Resource Not Ready")
        if sender in self.scan_subscribers:
            raise DBusBluezInProgressError("Operation already in progress")

        async def on_sender_lost():
            if self.scan_subscribers.pop(sender, None) is not None and not self.scan_subscribers:
                await stop_discovering(self)
        self.scan_subscribers[sender] = events.subscribe(
            f"service:lost:{sender}", on_sender_lost, once=True)
        if not self.discovering:
            self.discovering_task = self.mock.create_discovering_task(self.id)
            await self.Discovering.set_async(True)

    @dbus_method(Adapter, "StopDiscovery")
    async def stop_discovery(self):
        sender = sdbus.get_current_message().sender
        subscription = self.scan_subscribers.pop(sender, None)
        if subscription is None:
            raise DBusBluezFailedError("No discovery started")
        subscription.unsubscribe()
        if not self.scan_subscribers:
            await stop_discovering(self)

    original_create_discovering_task = bluezoo_main.BluezMockService.create_discovering_task

    def create_discovering_task(self, id):
        """bluezoo's scan loop, whose death (e.g. on a malformed advertised UUID) is logged."""
        task = original_create_discovering_task(self, id)

        def report(task):
            if not task.cancelled() and task.exception() is not None:
                patch_log.error(f"the scan loop of hci{id} died: discovery stopped",
                                exc_info=task.exception())
        task.add_done_callback(report)
        return task

    bluezoo_main.BluezMockService.create_discovering_task = create_discovering_task

    # (g) Power: off drops the adapter's connections and discovery sessions. ------------------

    powered = Adapter.__dict__["Powered"]
    original_powered_setter = powered.property_setter

    def powered_setter(self, value):
        was_on = self.powered
        original_powered_setter(self, value)
        if was_on and not value:
            for subscription in self.scan_subscribers.values():
                subscription.unsubscribe()
            self.scan_subscribers.clear()

            async def drop_connections():
                for device in list(self.devices.values()):
                    if device.connected:
                        await device.disconnect()
            create_background_task(drop_connections())
    powered.property_setter = powered_setter

    # (h) Agents: one per client (bluezoo allowed one in all), default promoted correctly. ---

    async def del_agent(self, agent):
        patch_log.info(f"Unregistering {agent}")
        self.agents.pop(agent.get_client(), None)
        await agent.cleanup()
        if agent is self.agent:
            self.agent = list(self.agents.values())[-1] if self.agents else None
        if self.agent is None:
            for adapter in self.mock.adapters.values():
                if adapter.pairable:
                    create_background_task(adapter.Pairable.set_async(False))
    RootManager._RootManager__del_agent = del_agent

    @dbus_method(RootManager, "RegisterAgent")
    async def register_agent(self, path, capability):
        sender = sdbus.get_current_message().sender
        if sender in self.agents:
            raise DBusBluezAlreadyExistsError("Already Exists")

        async def on_sender_lost():
            await del_agent(self, agent)
        agent = AgentClient(sender, path, capability or "KeyboardDisplay", on_sender_lost)
        patch_log.info(f"Registering {agent}")
        self.agents[sender] = agent
        if self.agent is None:
            self.agent = agent
        for adapter in self.mock.adapters.values():
            if not adapter.pairable:
                create_background_task(adapter.Pairable.set_async(True))

    # (k) Service Changed. bluetoothd tells connected centrals when its GATT database changes
    # (an application registered or unregistered) and their bluetoothd rediscovers: the
    # device's GATT objects go away and come back. bluezoo resolved services only at connect.
    from bluezoo.gatt import (GattCharacteristicClient, GattDescriptorClient, GattDescriptorClientLink,
                              GattManager, GattServiceClient, GattServiceClientLink)

    async def database_changed(adapter):
        for central in list(adapter.mock.adapters.values()):
            for device in list(central.devices.values()):
                if device.peer_adapter is not adapter or not device.connected:
                    continue
                for path in sorted(device.services, reverse=True):
                    link = device.services[path]
                    if isinstance(link, GattCharacteristicClientLink):
                        end_notify_session(link)
                    try:
                        adapter.mock.remove_object(link)
                    except KeyError:
                        pass
                device.services.clear()
                for app in adapter.gatt_apps.values():
                    made = {}
                    for obj_path, obj in sorted(app.objects.items(), key=lambda item: item[0]):
                        if isinstance(obj, GattServiceClient):
                            link = GattServiceClientLink(obj, device)
                        elif isinstance(obj, GattCharacteristicClient):
                            link = GattCharacteristicClientLink(obj, made[obj.Service.get()])
                        elif isinstance(obj, GattDescriptorClient):
                            link = GattDescriptorClientLink(obj, made[obj.Characteristic.get()])
                        else:
                            continue
                        adapter.mock.export_object(link.get_object_path(), link)
                        device.services[link.get_object_path()] = link
                        made[obj_path] = link
                patch_log.info(f"Service Changed: {device} has {len(device.services)} GATT object(s)")

    for name in ("RegisterApplication", "UnregisterApplication"):
        original = GattManager.__dict__[name].original_method

        def make(original):
            async def changed(self, *args):
                result = await original(self, *args)
                await database_changed(self)
                return result
            return changed
        dbus_method(GattManager, name)(make(original))

    return bluezoo_main, create_background_task


def child_main(args: argparse.Namespace) -> int:
    import logging

    # fd 1 is the protocol pipe: keep a private copy and point fd 1 at stderr, so that nothing
    # bluezoo or a library prints can reach the supervisor's protocol.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    level = logging.INFO if args.verbose < 2 else logging.DEBUG
    logging.basicConfig(level=level, stream=sys.stderr,
                        format="%(name)s %(levelname)s: %(message)s")
    if args.verbose == 0:
        logging.getLogger("bluezoo").addFilter(  # one line per scan per discovering adapter
            lambda record: not record.getMessage().startswith("Scanning for devices"))

    bluezoo_main, create_background_task = apply_patches()

    import asyncio
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)

    from bluezoo.utils import setup_default_bus

    async def settle():
        """Waits (at most 2 s) for bluezoo's background tasks, e.g. PowerState transitions."""
        deadline = loop.time() + 2
        while loop.time() < deadline:
            pending = [t for t in create_background_task.tasks if not t.done()]
            if not pending:
                return
            await asyncio.wait(pending, timeout=deadline - loop.time())

    async def run() -> int:
        bus = setup_default_bus("system")
        service = bluezoo_main.BluezMockService(True, args.scan_interval)
        bluezoo_main.startup.service = service  # bluezoo keeps it here against GC
        # bluetoothd's order: the name first (`connect_dbus`), the adapters a moment later, as
        # the kernel's management interface answers (`adapter_init`). Clients must cope with an
        # owner that has no adapter yet, notably after a restart.
        await bus.request_name_async("org.bluez", 0)
        await asyncio.sleep(args.adapter_delay)
        for ident, address in args.adapters:
            await service.add_adapter(ident, address)
        await settle()
        protocol.write("READY\n")

        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            raw = await reader.readline()
            if not raw:
                return 0  # The supervisor is gone or closed us.
            words = raw.decode(errors="replace").split()
            if not words:
                continue
            command = " ".join(words)
            if words == ["quit"]:
                message = bus.new_method_call_message(
                    "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                    "ReleaseName")
                message.append_data("s", "org.bluez")
                await bus.call_async(message)
                adapters = " ".join(f"{a.id}={a.address}" for a in service.adapters.values())
                protocol.write(f"OK quit {adapters}\n".replace(" \n", "\n"))
                protocol.flush()
                os._exit(0)  # Like a crash: the bus drops every object without signals.
            try:
                await execute(service, words)
                protocol.write(f"OK {command}\n")
            except CommandError as error:
                protocol.write(f"ERR {command}: {error}\n")
            except Exception as error:
                logging.getLogger("tether-rig").exception(command)
                protocol.write(f"ERR {command}: {type(error).__name__}: {error}\n")

    async def execute(service, words):
        name = words[0]
        if name == "ping" and len(words) == 1:
            return
        if name == "add-adapter" and len(words) == 3:
            ident = parse_id(words[1])
            address = words[2].upper()
            if not ADDRESS_RE.match(address):
                raise CommandError(f"invalid Bluetooth address {words[2]!r}")
            if ident in service.adapters:
                raise CommandError(f"hci{ident} already exists")
            for other in service.adapters.values():
                if other.address.upper() == address:
                    raise CommandError(f"hci{other.id} already has the address {address}")
            await service.add_adapter(ident, address)
            await settle()
            return
        if name == "remove-adapter" and len(words) == 2:
            ident = parse_id(words[1])
            if ident not in service.adapters:
                raise CommandError(f"hci{ident} does not exist")
            await service.del_adapter(ident)
            await settle()
            return
        if name == "power" and len(words) == 3 and words[2] in ("on", "off"):
            ident = parse_id(words[1])
            adapter = service.adapters.get(ident)
            if adapter is None:
                raise CommandError(f"hci{ident} does not exist")
            await adapter.Powered.set_async(words[2] == "on")
            await settle()
            return
        usages = {"ping": "ping", "add-adapter": "add-adapter <id> <address>",
                  "remove-adapter": "remove-adapter <id>", "power": "power <id> on|off"}
        if name in usages:
            raise CommandError(f"usage: {usages[name]}")
        raise CommandError("unknown command")

    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    try:
        return loop.run_until_complete(run())
    except Exception as error:
        logging.getLogger("tether-rig").exception("bluezoo failed")
        protocol.write(f"FAILED {type(error).__name__}: {error}\n")
        return 1


class CommandError(Exception):
    pass


def parse_id(text: str) -> int:
    if not text.isdigit() or int(text) > 255:
        raise CommandError(f"invalid adapter id {text!r} (0...255)")
    return int(text)


if __name__ == "__main__":
    # Whoever started us may have blocked signals (Foundation's Process spawns from threads that
    # block nearly all of them, and the mask survives exec): SIGTERM must work here and in the
    # dbus-daemon and bluezoo processes, which inherit our mask.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    arguments = parse_arguments()
    sys.exit(child_main(arguments) if arguments.child else supervisor_main(arguments))
