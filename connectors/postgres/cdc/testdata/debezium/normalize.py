#!/usr/bin/python3
"""normalize.py RUN.jsonl — print the records with the fields that vary
from one generation to the next replaced by "<ts>", "<lsn>", "<txid>",
"<runid>" and the heartbeat topic cut to its first record, so two
generations can be diffed:

    diff <(./normalize.py old/default.jsonl) <(./normalize.py default.jsonl)

It is also the reference for what a golden comparison must normalise
(README.md lists the same fields)."""
import json
import sys

TS = ('ts_ms', 'ts_us', 'ts_ns')


def norm_source(src):
    for k in TS:
        if src.get(k) is not None:
            src[k] = '<ts>'
    for k in ('lsn', 'origin_lsn'):
        if src.get(k) is not None:
            src[k] = '<lsn>'
    if src.get('txId') is not None:
        src['txId'] = '<txid>'
    if src.get('sequence') is not None:
        src['sequence'] = '<lsn>'
    if src.get('xmin') is not None:
        src['xmin'] = '<txid>'


def norm(rec):
    for k in list(rec['headers']):
        if k == '__debezium.context.runId':
            rec['headers'][k] = '<runid>'
    v = rec['value']
    p = v.get('payload') if isinstance(v, dict) else None
    if isinstance(p, dict):
        for k in TS:
            if p.get(k) is not None:
                p[k] = '<ts>'
        if isinstance(p.get('source'), dict):
            norm_source(p['source'])
        if isinstance(p.get('transaction'), dict):
            p['transaction']['id'] = '<txid>:<lsn>'
        if rec['topic'].endswith('.transaction'):
            p['id'] = '<txid>:<lsn>'
            rec['key']['payload']['id'] = '<txid>:<lsn>'
    return rec


def main():
    for path in sys.argv[1:]:
        beats = 0
        for line in open(path, encoding='utf-8'):
            rec = json.loads(line)
            if rec['topic'].startswith('__debezium-heartbeat.'):
                beats += 1
                if beats > 1:
                    continue
            print(json.dumps(norm(rec), ensure_ascii=False, separators=(',', ':')))


if __name__ == '__main__':
    main()
