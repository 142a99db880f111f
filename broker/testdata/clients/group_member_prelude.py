import sys, json, threading
stop = threading.Event()
def watch_stdin():
    sys.stdin.read()
    stop.set()
threading.Thread(target=watch_stdin, daemon=True).start()
def emit(**ev):
    print(json.dumps(ev), flush=True)
addr, group, topic, name, session_ms = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
