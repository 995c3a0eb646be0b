#!/usr/bin/env python3
"""Interoperability check: the public Python client `meshcore` drives Tether's emulated
companion radio over TCP.

Spawns the emulator (`--emulator-cmd` followed by its full argv, which must listen on TCP port
0 and print "MeshCore emulator listening on tcp://HOST:PORT"), connects with
`MeshCore.create_tcp`, and goes through app start, device query, contacts, time, battery, a
direct message to the echo bot (its ack and its reply), channel info and a channel message.
Prints one JSON summary on stdout; exits non-zero on any failure. Aborts after 60 s.
"""
import argparse
import asyncio
import json
import re
import sys

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
    finally:
        await mc.disconnect()


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
