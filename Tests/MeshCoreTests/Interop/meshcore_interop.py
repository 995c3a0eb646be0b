#!/usr/bin/env python3
"""Interoperability check: the public Python client `meshcore` drives Tether's emulated
companion radio over TCP.

Spawns the emulator (`--emulator-cmd` followed by its full argv, which must listen on TCP port
0 and print "MeshCore emulator listening on tcp://HOST:PORT"), connects with
`MeshCore.create_tcp`, and goes through app start, device query, contacts, time, battery, a
direct message to the echo bot (its ack and its reply), channel info and a channel message;
then the device commands (TX power, tuning, other params, custom variables, statistics,
channels with '#name' secrets, auto-add rules, repeat frequencies, path hash mode, flood
scopes, own card export/import, signing, private key export, own telemetry) and the remote
ones (logins to the repeater, room server and sensor, status, telemetry, binary and anonymous
requests, trace, path discovery, node discovery, remote CLI, logout).
Prints one JSON summary on stdout; exits non-zero on any failure. Aborts after 60 s.

Where the emulated radio answers differently from the firmware (as the app sees it), the
difference is listed in the summary's "firmware_deviations" instead of failing the run.
"""
import argparse
import asyncio
import hashlib
import json
import re
import sys

from Crypto.Signature import eddsa  # pycryptodome, a dependency of meshcore
from meshcore import EventType, MeshCore

SAFETY_TIMEOUT = 60


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


async def spawn(argv):
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode("utf-8", "replace").strip()
    match = re.search(r"listening on tcp://(.+):(\d+)$", line)
    if not match:
        rest = (await process.stderr.read()).decode("utf-8", "replace") if process.returncode is not None else ""
        raise Failure(f"unexpected first line from the emulator: {line!r} {rest}")
    return process, match.group(1), int(match.group(2))


async def drain(stream, lines):
    while True:
        line = await stream.readline()
        if not line:
            return
        lines.append(line.decode("utf-8", "replace").rstrip())


async def exercise(host, port, summary):
    mc = await MeshCore.create_tcp(host, port)
    check(mc is not None, "create_tcp returned None (no SELF_INFO)")
    lost = Collector(mc, EventType.DISCONNECTED)
    try:
        info = mc.self_info
        check(info.get("name") == "Tether Base", f"self info name {info.get('name')!r}")
        check(len(info.get("public_key", "")) == 64, "self info public key")
        summary["self_info"] = {"name": info["name"], "public_key": info["public_key"]}

        result = await mc.commands.send_device_query()
        check(result.type == EventType.DEVICE_INFO, f"device query: {result}")
        device = result.payload
        check(device.get("fw ver") == 13 and device.get("max_contacts") == 100 and device.get("ver") == "v1.17",
              f"device info {device}")
        summary["device_info"] = {k: device.get(k) for k in ("fw ver", "max_contacts", "max_channels", "ble_pin", "ver")}

        result = await mc.commands.get_contacts()
        check(result.type == EventType.CONTACTS, f"get_contacts: {result}")
        names = sorted(contact["adv_name"] for contact in result.payload.values())
        check({"Alice", "Bob", "Echo"} <= set(names), f"contacts {names}")
        summary["contacts"] = names

        result = await mc.commands.get_time()
        check(result.type == EventType.CURRENT_TIME, f"get_time: {result}")
        now = result.payload["time"]
        result = await mc.commands.set_time(now + 100)
        check(result.type == EventType.OK, f"set_time forward: {result}")
        result = await mc.commands.get_time()
        check(result.payload["time"] >= now + 100, f"time after set {result.payload}")
        result = await mc.commands.set_time(now)
        check(result.type == EventType.ERROR and result.payload.get("error_code") == 6, f"set_time backwards: {result}")
        summary["time"] = {"read": now, "backwards_error": 6}

        result = await mc.commands.get_bat()
        check(result.type == EventType.BATTERY and result.payload.get("level", 0) > 3000, f"battery: {result}")
        check("total_kb" in result.payload, f"storage missing: {result.payload}")
        summary["battery"] = result.payload

        echo = mc.get_contact_by_name("Echo")
        check(echo is not None, "no Echo contact")
        text = "hello from python"
        result = await mc.commands.send_msg(echo, text)
        check(result.type == EventType.MSG_SENT, f"send_msg: {result}")
        expected_ack = result.payload["expected_ack"].hex()
        ack = await mc.wait_for_event(EventType.ACK, attribute_filters={"code": expected_ack}, timeout=15)
        check(ack is not None, f"no ACK {expected_ack}")
        summary["direct_message"] = {"expected_ack": expected_ack, "flood": result.payload["type"],
                                     "trip_time": ack.payload.get("trip_time")}

        reply = None
        for _ in range(40):
            result = await mc.commands.get_msg(timeout=5)
            if result.type == EventType.CONTACT_MSG_RECV and result.payload.get("text") == "echo: " + text:
                reply = result.payload
                break
            if result.type == EventType.NO_MORE_MSGS:
                await mc.wait_for_event(EventType.MESSAGES_WAITING, timeout=5)
            elif result.type == EventType.ERROR:
                raise Failure(f"get_msg: {result}")
        check(reply is not None, "no echo reply")
        check(reply["pubkey_prefix"] == echo["public_key"][:12], f"reply sender {reply['pubkey_prefix']}")
        summary["echo_reply"] = {"text": reply["text"], "snr": reply.get("SNR"), "path_len": reply.get("path_len")}

        result = await mc.commands.get_channel(0)
        check(result.type == EventType.CHANNEL_INFO and result.payload.get("channel_name") == "Public",
              f"get_channel: {result}")
        result = await mc.commands.send_chan_msg(0, "hi everyone from python")
        check(result.type == EventType.OK, f"send_chan_msg: {result}")
        summary["channel"] = {"name": "Public", "sent": True}

        result = await mc.commands.send_advert(flood=True)
        check(result.type == EventType.OK, f"send_advert: {result}")
        summary["advert"] = True

        deviations = []
        await device_commands(mc, summary, deviations)
        await remote_commands(mc, summary, deviations)
        summary["firmware_deviations"] = deviations
    except Failure as failure:
        if lost.events:
            raise Failure(f"{failure} (the connection was lost: {lost.events[0].payload})") from None
        raise
    finally:
        lost.close()
        await mc.disconnect()


class Collector:
    """Collects the events of one type from its creation on: made before the command that
    causes them, it cannot miss an answer pushed right behind the command's own reply."""

    def __init__(self, mc, event_type, attribute_filters=None):
        self.events = []
        self._arrived = asyncio.Event()
        self._subscription = mc.subscribe(event_type, self._add, attribute_filters)

    def _add(self, event):
        self.events.append(event)
        self._arrived.set()

    async def wait(self, condition, timeout):
        """Waits until `condition(events)` holds; returns whether it did within `timeout` s."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition(self.events):
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except asyncio.TimeoutError:
                return condition(self.events)
        return True

    async def first(self, timeout):
        """The first event collected, waiting at most `timeout` s; None if none came."""
        return self.events[0] if await self.wait(lambda events: events, timeout) else None

    def close(self):
        self._subscription.unsubscribe()


async def next_message(mc, matches, timeout):
    """Fetches queued messages until one whose payload `matches` (others, such as the demo
    mesh's scripted chatter, are skipped); None after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (remaining := deadline - loop.time()) > 0:
        waiting = Collector(mc, EventType.MESSAGES_WAITING)
        try:
            result = await mc.commands.get_msg(timeout=min(5, remaining))
            if result.type in (EventType.CONTACT_MSG_RECV, EventType.CHANNEL_MSG_RECV, EventType.CHANNEL_DATA_RECV):
                if matches(result.payload):
                    return result.payload
            elif result.type == EventType.NO_MORE_MSGS:
                await waiting.first(max(0, min(5, deadline - loop.time())))
            elif result.type == EventType.ERROR and "error_code" in result.payload:
                raise Failure(f"get_msg: {result}")
        finally:
            waiting.close()
    return None


def without(payload, *keys):
    """`payload` without the keys whose values change from run to run (clocks, uptimes)."""
    return {key: value for key, value in payload.items() if key not in keys}


async def device_commands(mc, summary, deviations):
    """The radio's own settings, statistics, channels, identity and card."""
    commands = mc.commands
    public_key = mc.self_info["public_key"]

    # Statistics first, while the counters hold only what the checks above sent and received.
    result = await commands.get_stats_core()
    check(result.type == EventType.STATS_CORE, f"get_stats_core: {result}")
    check(result.payload["battery_mv"] == 4012, f"core stats {result.payload}")
    summary["stats_core"] = result.payload["battery_mv"]
    result = await commands.get_stats_radio()
    check(result.type == EventType.STATS_RADIO, f"get_stats_radio: {result}")
    summary["stats_radio"] = result.payload
    result = await commands.get_stats_packets()
    check(result.type == EventType.STATS_PACKETS, f"get_stats_packets: {result}")
    packets = result.payload
    # Sent so far: the message to Echo, the channel message and the advert.
    check(packets["sent"] >= 3 and packets["sent"] == packets["flood_tx"] + packets["direct_tx"]
          and packets["recv"] == packets["flood_rx"] + packets["direct_rx"], f"packet stats {packets}")
    summary["stats_packets"] = packets

    # SET_RADIO_TX_POWER: the lib sends the value as 4 bytes, the firmware reads the first one as
    # an int8 (layouts §13.4); SELF_INFO (APP_START again) reports it.
    result = await commands.set_tx_power(10)
    check(result.type == EventType.OK, f"set_tx_power: {result}")
    result = await commands.send_appstart()
    check(result.type == EventType.SELF_INFO and result.payload["tx_power"] == 10, f"self info after set_tx_power: {result}")
    summary["tx_power"] = result.payload["tx_power"]

    # SET/GET_TUNING_PARAMS: the lib passes integers through unscaled, so the firmware's x1000
    # fixed point is the caller's business: rx delay 2.5 and airtime factor 1.5 go out as 2500 and
    # 1500 (set_tuning(2.5, 1.5) would truncate them to 2 and 1), and get_tuning reports them so.
    result = await commands.set_tuning(2500, 1500)
    check(result.type == EventType.OK, f"set_tuning: {result}")
    result = await commands.get_tuning()
    check(result.type == EventType.TUNING_PARAMS and result.payload == {"rx_delay": 2500, "airtime_factor": 1500},
          f"get_tuning: {result}")
    summary["tuning"] = {"rx_dly": result.payload["rx_delay"], "af": result.payload["airtime_factor"]}

    # SET_OTHER_PARAMS: each of the lib's setters reads SELF_INFO and writes all four fields back.
    result = await commands.send_appstart()
    check(result.type == EventType.SELF_INFO, f"appstart: {result}")
    original = result.payload
    for setter, value in ((commands.set_multi_acks, 1), (commands.set_telemetry_mode_base, 2),
                          (commands.set_advert_loc_policy, 1)):
        result = await setter(value)
        check(result.type == EventType.OK, f"{setter.__name__}: {result}")
    info = (await commands.send_appstart()).payload
    other = {key: info.get(key) for key in ("multi_acks", "telemetry_mode_base", "telemetry_mode_loc",
                                            "telemetry_mode_env", "adv_loc_policy", "manual_add_contacts")}
    check(other == {"multi_acks": 1, "telemetry_mode_base": 2, "telemetry_mode_loc": original["telemetry_mode_loc"],
                    "telemetry_mode_env": original["telemetry_mode_env"], "adv_loc_policy": 1,
                    "manual_add_contacts": original["manual_add_contacts"]}, f"other params {other}")
    summary["other_params"] = other
    result = await commands.set_other_params_from_infos(original)
    check(result.type == EventType.OK, f"restoring other params: {result}")
    info = (await commands.send_appstart()).payload
    check(info["multi_acks"] == original["multi_acks"] and info["adv_loc_policy"] == original["adv_loc_policy"],
          f"other params not restored: {info}")

    # GET/SET_CUSTOM_VAR(S): "name:value" pairs; a name the radio does not have is ERR 6.
    result = await commands.get_custom_vars()
    check(result.type == EventType.CUSTOM_VARS and result.payload.get("gps") == "0", f"get_custom_vars: {result}")
    result = await commands.set_custom_var("gps", "1")
    check(result.type == EventType.OK, f"set_custom_var: {result}")
    result = await commands.get_custom_vars()
    check(result.type == EventType.CUSTOM_VARS and result.payload.get("gps") == "1", f"custom vars after set: {result}")
    summary["custom_vars"] = result.payload
    result = await commands.set_custom_var("no_such_setting", "1")
    check(result.type == EventType.ERROR and result.payload.get("error_code") == 6, f"unknown custom var: {result}")
    summary["custom_var_unknown_error"] = 6

    # SET/GET_CHANNEL: for a '#name' the lib derives the secret, SHA-256 of the name (with '#').
    result = await commands.set_channel(2, "#ops")
    check(result.type == EventType.OK, f"set_channel: {result}")
    result = await commands.get_channel(2)
    check(result.type == EventType.CHANNEL_INFO and result.payload["channel_name"] == "#ops", f"get_channel(2): {result}")
    secret = result.payload["channel_secret"].hex()
    check(secret == hashlib.sha256(b"#ops").digest()[:16].hex(), f"#ops secret {secret}")
    summary["channel_ops_secret"] = secret

    # SET/GET_AUTOADD_CONFIG: the lib sends the config byte only, so max_hops stays as it was.
    result = await commands.get_autoadd_config()
    check(result.type == EventType.AUTOADD_CONFIG, f"get_autoadd_config: {result}")
    before = result.payload
    result = await commands.set_autoadd_config(0x1E)
    check(result.type == EventType.OK, f"set_autoadd_config: {result}")
    result = await commands.get_autoadd_config()
    check(result.type == EventType.AUTOADD_CONFIG and result.payload == {"config": 0x1E, "max_hops": before.get("max_hops")},
          f"autoadd config after set: {result}")
    summary["autoadd"] = result.payload
    result = await commands.set_autoadd_config(before["config"])
    check(result.type == EventType.OK, f"restoring the autoadd config: {result}")

    result = await commands.get_allowed_repeat_freq()
    check(result.type == EventType.ALLOWED_REPEAT_FREQ and result.payload["freqs"], f"get_allowed_repeat_freq: {result}")
    summary["repeat_freqs"] = result.payload["freqs"]

    # SET_PATH_HASH_MODE, read back through DEVICE_INFO; modes above 2 are ERR 6.
    result = await commands.set_path_hash_mode(1)
    check(result.type == EventType.OK, f"set_path_hash_mode(1): {result}")
    mode = await commands.get_path_hash_mode()
    check(mode == 1, f"path hash mode {mode}")
    result = await commands.set_path_hash_mode(3)
    check(result.type == EventType.ERROR and result.payload.get("error_code") == 6, f"set_path_hash_mode(3): {result}")
    result = await commands.set_path_hash_mode(0)
    check(result.type == EventType.OK and await commands.get_path_hash_mode() == 0, f"set_path_hash_mode(0): {result}")
    summary["path_hash_mode"] = {"read": mode, "invalid_error": 6}

    # SET_FLOOD_SCOPE_KEY (session): a region, no scope, forced un-scoped, then back to the default.
    scope = {}
    for name, call in (("region", lambda: commands.set_flood_scope("europe")), ("cleared", commands.reset_flood_scope),
                       ("unscoped", commands.force_unscoped), ("default", commands.reset_flood_scope)):
        result = await call()
        check(result.type == EventType.OK, f"flood scope {name}: {result}")
        scope[name] = True
    summary["flood_scope"] = scope

    # SET/GET_DEFAULT_FLOOD_SCOPE. reset_default_flood_scope() passes None to a padding
    # computation and raises TypeError (layouts §13.8); "0" clears it (a 47-byte frame, which
    # the firmware takes as "clear").
    result = await commands.set_default_flood_scope("europe")
    check(result.type == EventType.OK, f"set_default_flood_scope: {result}")
    result = await commands.get_default_flood_scope()
    check(result.type == EventType.DEFAULT_FLOOD_SCOPE, f"get_default_flood_scope: {result}")
    configured = result.payload
    check(configured == {"scope_name": "#europe", "scope_key": hashlib.sha256(b"#europe").digest()[:16].hex()},
          f"default flood scope {configured}")
    result = await commands.set_default_flood_scope("0")
    check(result.type == EventType.OK, f"clearing the default flood scope: {result}")
    result = await commands.get_default_flood_scope()
    check(result.type == EventType.DEFAULT_FLOOD_SCOPE and result.payload == {}, f"default flood scope after clear: {result}")
    summary["default_flood_scope"] = {"set": configured, "cleared": result.payload}

    # EXPORT_CONTACT (own card): a flood advert, 11 00 <key 32> <time 4> <signature 64> <app data>,
    # signed over key, time and app data; the lib turns it into a meshcore:// URI.
    result = await commands.export_contact()
    check(result.type == EventType.CONTACT_URI, f"export_contact: {result}")
    uri = result.payload["uri"]
    check(uri.startswith("meshcore://11"), f"own card {uri}")
    card = bytes.fromhex(uri[len("meshcore://"):])
    check(card[1] == 0 and card[2:34].hex() == public_key, f"own card header/key {card[:34].hex()}")
    app_data = card[102:]
    try:
        eddsa.new(eddsa.import_public_key(card[2:34]), "rfc8032").verify(card[2:38] + app_data, card[38:102])
    except ValueError:
        raise Failure(f"own card signature does not verify: {uri}") from None
    check(app_data[0] & 0x0F == 1 and app_data[-len(b"Tether Base"):] == b"Tether Base", f"own card app data {app_data.hex()}")
    summary["own_card"] = uri
    # A contact the radio has never heard has no advert to export: ERR 2.
    result = await commands.export_contact(mc.get_contact_by_name("Alice"))
    check(result.type == EventType.ERROR and result.payload.get("error_code") == 2, f"export_contact(Alice): {result}")
    summary["export_unheard_contact_error"] = 2
    # IMPORT_CONTACT takes a raw advert (here the radio's own card: OK, then ignored).
    result = await commands.import_contact(card)
    check(result.type == EventType.OK, f"import_contact: {result}")
    summary["import_contact"] = True

    # SIGN_START/DATA/FINISH through the lib's sign(): an Ed25519 signature by the radio's key.
    message = b"hello from python"
    result = await commands.sign(message, timeout=10)
    check(result.type == EventType.SIGNATURE and len(result.payload["signature"]) == 64, f"sign: {result}")
    signature = result.payload["signature"]
    try:
        eddsa.new(eddsa.import_public_key(bytes.fromhex(public_key)), "rfc8032").verify(message, signature)
    except ValueError:
        raise Failure(f"signature {signature.hex()} does not verify with {public_key}") from None
    summary["signature"] = signature.hex()
    summary["signer_key"] = public_key

    # EXPORT_PRIVATE_KEY: 64 bytes. The firmware sends its Ed25519 *expanded* key (clamped
    # scalar and hash prefix, layouts §5 0x17); record which layout the radio used.
    result = await commands.export_private_key()
    check(result.type == EventType.PRIVATE_KEY and len(result.payload["private_key"]) == 64, f"export_private_key: {result}")
    private = result.payload["private_key"]
    derived = eddsa.import_private_key(private[:32]).public_key().export_key(format="raw").hex()
    layout = "seed+public_key" if derived == public_key and private[32:].hex() == public_key else "other"
    summary["private_key"] = {"length": len(private), "layout": layout}
    if layout == "seed+public_key":
        deviations.append("EXPORT_PRIVATE_KEY returns the 32-byte seed followed by the public key; "
                          "the firmware returns the 64-byte expanded key (clamped scalar, hash prefix)")

    # SEND_TELEMETRY_REQ for the radio itself (27 00 00 00): an immediate 0x8B push, LPP decoded.
    result = await commands.get_self_telemetry()
    check(result.type == EventType.TELEMETRY_RESPONSE and result.payload["pubkey_pre"] == public_key[:12],
          f"get_self_telemetry: {result}")
    check(result.payload["lpp"] and result.payload["lpp"][0]["type"] == "voltage", f"own telemetry {result.payload}")
    summary["telemetry_self"] = result.payload["lpp"]


async def remote_commands(mc, summary, deviations):
    """Requests to the demo mesh's repeater, room server, sensor and chat nodes."""
    commands = mc.commands
    public_key = mc.self_info["public_key"]
    ridge = mc.get_contact_by_name("Ridge Repeater")
    room = mc.get_contact_by_name("Trail Club")
    sensor = mc.get_contact_by_name("Weather Station")
    bob = mc.get_contact_by_name("Bob")
    check(None not in (ridge, room, sensor, bob), "a demo contact is missing")
    ridge_prefix = ridge["public_key"][:12]
    now = (await commands.get_time()).payload["time"]

    # SEND_LOGIN. A wrong password gets no answer at all (the lib waits, then returns None).
    result = await commands.send_login_sync(ridge, "wrong", timeout=2.5)
    check(result is None, f"login with a wrong password: {result}")
    summary["login_wrong_password"] = None
    path_updates = Collector(mc, EventType.PATH_UPDATE, {"public_key": ridge["public_key"]})
    result = await commands.send_login_sync(ridge, "password", timeout=8)
    check(result is not None and result.type == EventType.LOGIN_SUCCESS, f"login to Ridge Repeater: {result}")
    login = result.payload
    check(login.get("is_admin") is True and login.get("permissions") == 1 and login.get("acl_permissions") == 3
          and login.get("fw_ver_level") == 2 and login.get("pubkey_prefix") == ridge_prefix, f"login {login}")
    check(abs(login["server_timestamp"] - now) < 120, f"login server clock {login['server_timestamp']} vs {now}")
    summary["login"] = without(login, "server_timestamp")

    # Status through SEND_BINARY_REQ type 0x01 (the lib's req_status_sync) ...
    status = await commands.req_status_sync(ridge, timeout=8)
    check(status is not None and status["pubkey_pre"] == ridge_prefix and status["bat"] > 3000, f"req_status_sync: {status}")
    summary["status"] = without(status, "uptime")
    # ... and through SEND_STATUS_REQ (0x1B, answered by push 0x87).
    pushes = Collector(mc, EventType.STATUS_RESPONSE, {"pubkey_prefix": ridge_prefix})
    sent = await commands.send_statusreq(ridge)
    check(sent.type == EventType.MSG_SENT, f"send_statusreq: {sent}")
    pushed = await pushes.first(8)
    pushes.close()
    check(pushed is not None and pushed.payload["bat"] == status["bat"], f"status push: {pushed}")
    summary["status_push"] = without(pushed.payload, "uptime")
    # A server answers a flooded request with a path return: the firmware stores the path,
    # pushes PATH_UPDATED (0x81) and sends the next requests direct.
    summary["login_path_update"] = bool(path_updates.events)
    path_updates.close()
    if not summary["login_path_update"] and sent.payload["type"] == 1:
        deviations.append("no PATH_UPDATED (0x81) after the flooded login to Ridge Repeater, and later requests "
                          "still flood (SENT flag 1); the firmware's server answers a flood with a path return, "
                          "which stores the path and pushes 0x81")

    # Telemetry through SEND_BINARY_REQ type 0x03 and through SEND_TELEMETRY_REQ (push 0x8B).
    lpp = await commands.req_telemetry_sync(ridge, timeout=8)
    check(lpp and lpp[0]["type"] == "voltage", f"req_telemetry_sync: {lpp}")
    summary["telemetry_remote"] = lpp
    pushes = Collector(mc, EventType.TELEMETRY_RESPONSE, {"pubkey_prefix": ridge_prefix})
    sent = await commands.send_telemetry_req(ridge)
    check(sent.type == EventType.MSG_SENT, f"send_telemetry_req: {sent}")
    pushed = await pushes.first(8)
    pushes.close()
    check(pushed is not None and pushed.payload["lpp"] == lpp, f"telemetry push: {pushed}")
    summary["telemetry_push"] = pushed.payload["lpp"]

    # Neighbours (0x06) and access list (0x05) through the lib's binary requests.
    neighbours = await commands.req_neighbours_sync(ridge, timeout=8)
    check(neighbours is not None and neighbours["results_count"] == len(neighbours["neighbours"])
          and neighbours["results_count"] <= neighbours["neighbours_count"], f"req_neighbours_sync: {neighbours}")
    summary["neighbours"] = {"total": neighbours["neighbours_count"], "returned": neighbours["results_count"],
                             "neighbours": neighbours["neighbours"]}
    acl = await commands.req_acl_sync(ridge, timeout=8)
    check(acl is not None and {"key": public_key[:12], "perm": 3} in acl, f"req_acl_sync: {acl}")
    summary["acl"] = acl

    # Owner info (0x07): the lib's BinaryReqType has no such member (layouts §13.11), so the raw
    # frame goes out through its generic send and the BINARY_RESPONSE (tag = SENT's ack) is read.
    sent = await commands.send(b"\x32" + bytes.fromhex(ridge["public_key"]) + b"\x07", [EventType.MSG_SENT, EventType.ERROR])
    check(sent.type == EventType.MSG_SENT, f"owner info request: {sent}")
    answer = await mc.wait_for_event(EventType.BINARY_RESPONSE, {"tag": sent.payload["expected_ack"].hex()}, timeout=8)
    check(answer is not None, "no answer to the owner info request")
    fields = bytes.fromhex(answer.payload["data"]).rstrip(b"\0").decode("utf-8", "replace").split("\n")
    check(len(fields) == 3 and fields[1] == "Ridge Repeater", f"owner info {fields}")
    summary["owner"] = {"firmware": fields[0], "name": fields[1], "owner": fields[2]}

    # SEND_ANON_REQ (owner, regions, clock): the lib gives the contact a zero-hop path first when
    # it has none (anonymous requests are answered only when they arrive direct), then resets it.
    owner = await commands.req_owner_sync(ridge, timeout=8)
    check(owner is not None and owner["name"] == "Ridge Repeater", f"req_owner_sync: {owner}")
    regions = await commands.req_regions_sync(ridge, timeout=8)
    check(regions is not None, "req_regions_sync: no answer")
    basic = await commands.req_basic_sync(ridge, timeout=8)
    check(basic is not None, "req_basic_sync: no answer")
    clock_reply = bytes.fromhex(basic["data"])
    check(abs(int.from_bytes(clock_reply[:4], "little") - now) < 120, f"anonymous clock {clock_reply.hex()}")
    summary["anon"] = {"owner": owner, "regions": regions, "clock_features": clock_reply[4]}

    # SEND_TRACE_PATH through Ridge Repeater (its key's first byte); SENT carries the tag.
    tag = 0x5EED1234
    traces = Collector(mc, EventType.TRACE_DATA, {"tag": tag})
    sent = await commands.send_trace(auth_code=0, tag=tag, path=ridge["public_key"][:2])
    check(sent.type == EventType.MSG_SENT and sent.payload["expected_ack"] == tag.to_bytes(4, "little")
          and sent.payload["type"] == 0, f"send_trace: {sent}")
    trace = await traces.first(8)
    traces.close()
    check(trace is not None and trace.payload.get("path", [{}])[0].get("hash") == ridge["public_key"][:2], f"trace: {trace}")
    summary["trace"] = without(trace.payload, "tag")

    # SEND_PATH_DISCOVERY_REQ to Bob (two hops): push 0x8D with the out and in paths.
    result = await commands.send_path_discovery_sync(bob, timeout=10)
    check(result is not None and result.type == EventType.PATH_RESPONSE and result.payload["pubkey_pre"] == bob["public_key"][:12],
          f"path discovery to Bob: {result}")
    summary["path_discovery"] = result.payload

    # Remote CLI: send_cmd uses txt_type 1 (CLI data) for a repeater (3 only for chat nodes,
    # which v13 firmware refuses, layouts §13.6); the answer comes back as a txt_type 1 message.
    acks = Collector(mc, EventType.ACK)
    sent = await commands.send_cmd(ridge, "ver")
    check(sent.type == EventType.MSG_SENT, f"send_cmd: {sent}")
    reply = await next_message(mc, lambda m: m.get("pubkey_prefix") == ridge_prefix and m.get("txt_type") == 1, 10)
    check(reply is not None, "no CLI reply from Ridge Repeater")
    summary["cli_reply"] = reply["text"]
    # The firmware expects no ACK for CLI data: SENT's expected_ack is 0 and nothing confirms it.
    cli_ack = sent.payload["expected_ack"].hex()
    acked = await acks.wait(lambda events: any(e.payload.get("code") == cli_ack for e in events), 1)
    acks.close()
    summary["cli_sent"] = {"expected_ack": cli_ack, "acked": acked}
    if cli_ack != "00000000":
        deviations.append("SEND_TXT_MSG txt_type 1 (CLI): SENT carries a non-zero expected_ack, the firmware sends 0")
    if acked:
        deviations.append("SEND_CONFIRMED (0x82) pushed for a CLI command; firmware servers do not ack CLI data")

    # SEND_CONTROL_DATA node discovery (repeaters and sensors, key prefixes): 0x8E pushes.
    tag = 0x0BADCAFE
    found = Collector(mc, EventType.DISCOVER_RESPONSE, {"tag": tag.to_bytes(4, "little").hex()})
    result = await commands.send_node_discover_req(0x14, prefix_only=True, tag=tag)
    check(result.type == EventType.OK, f"send_node_discover_req: {result}")
    await found.wait(lambda events: len(events) >= 2, 5)
    found.close()
    nodes = sorted(({"node_type": e.payload["node_type"], "pubkey": e.payload["pubkey"]} for e in found.events),
                   key=lambda node: node["pubkey"])
    expected = sorted(({"node_type": c["type"], "pubkey": c["public_key"][:16]} for c in (ridge, sensor)),
                      key=lambda node: node["pubkey"])
    check(nodes == expected, f"node discovery {nodes}")
    summary["node_discovery"] = nodes

    result = await commands.send_logout(ridge)
    check(result.type == EventType.OK, f"send_logout: {result}")
    summary["logout"] = True

    # Room server as a guest: role byte 2, no ACL permissions. The lib parses a room's status
    # with the repeater layout (layouts §13.9): its "rx_airtime" is the room's posts stored and
    # post pushes (two u16), its "recv_errors" the reply's zero padding.
    result = await commands.send_login_sync(room, "hello", timeout=8)
    check(result is not None and result.type == EventType.LOGIN_SUCCESS, f"login to Trail Club: {result}")
    check(result.payload.get("is_admin") is False and result.payload.get("permissions") == 2
          and result.payload.get("pubkey_prefix") == room["public_key"][:12], f"room login {result.payload}")
    summary["room_login"] = without(result.payload, "server_timestamp")
    status = await commands.req_status_sync(room, timeout=8)
    check(status is not None and status["pubkey_pre"] == room["public_key"][:12], f"room status: {status}")
    summary["room_status"] = without(status, "uptime")

    # Sensor as administrator: its telemetry adds the environment readings.
    result = await commands.send_login_sync(sensor, "password", timeout=8)
    check(result is not None and result.type == EventType.LOGIN_SUCCESS and result.payload.get("is_admin") is True,
          f"login to Weather Station: {result}")
    summary["sensor_login"] = without(result.payload, "server_timestamp")
    lpp = await commands.req_telemetry_sync(sensor, timeout=8)
    check(lpp is not None and {entry["type"] for entry in lpp} >= {"voltage", "temperature", "humidity"},
          f"sensor telemetry: {lpp}")
    summary["sensor_telemetry"] = lpp


async def run(argv):
    summary = {"ok": False}
    process = None
    output = []
    try:
        process, host, port = await spawn(argv)
        summary["port"] = port
        reader = asyncio.ensure_future(drain(process.stdout, output))
        await exercise(host, port, summary)
        summary["ok"] = True
    except Failure as failure:
        summary["error"] = str(failure)
    except Exception as error:  # any client error is a failed check, reported in the summary
        summary["error"] = f"{type(error).__name__}: {error}"
    finally:
        if process is not None:
            if process.stdin:
                process.stdin.close()  # the emulator exits at end of input
            try:
                await asyncio.wait_for(process.wait(), 10)
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()
                summary["ok"] = False
                summary.setdefault("error", "the emulator did not exit at end of input")
            summary["emulator_exit"] = process.returncode
            summary["emulator_lines"] = len(output)
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--emulator-cmd", nargs=argparse.REMAINDER, required=True,
                        help="the emulator's full argv (everything after this option)")
    arguments = parser.parse_args()
    try:
        summary = asyncio.run(asyncio.wait_for(run(arguments.emulator_cmd), SAFETY_TIMEOUT))
    except asyncio.TimeoutError:
        summary = {"ok": False, "error": f"aborted after the {SAFETY_TIMEOUT} s safety timeout"}
    print(json.dumps(summary, sort_keys=True))
    sys.exit(0 if summary.get("ok") else 1)


if __name__ == "__main__":
    main()
