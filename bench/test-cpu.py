"""Charges process-accounting records to test classes: bench/test-cpu.sh's summary. Arguments: dump-acct's output, the
daemon-to-class map the tests wrote (IPCBENCH_TEST_DAEMON_MAP), vmstat's output."""
import collections
import sys

records = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split('|')]
    if len(f) < 11:
        continue
    # dump-acct: command | version | user | system | elapsed (1/100 s) | uid | gid | memory | io | pid | ppid | ...
    records.append(dict(comm=f[0], cpu=(float(f[2]) + float(f[3])) / 100, pid=int(f[9]), ppid=int(f[10])))
owner = {}
for line in open(sys.argv[2]):
    pid, _, name = line.strip().partition(' ')
    owner[int(pid)] = name
by_pid = {r['pid']: r for r in records}

charged = collections.defaultdict(lambda: [0, 0.0, 0, 0.0])
for r in records:
    if r['comm'] == 'BenchDaemon':
        parent = by_pid.get(r['ppid'], {}).get('comm', 'gone')
        key = owner.get(r['pid'], f'(not through DaemonProcess; parent {parent})')
        charged[key][0] += 1
        charged[key][1] += r['cpu']
    elif r['comm'] == 'BenchAgent':
        key = owner.get(r['ppid'])
        if key is None:
            parent = by_pid.get(r['ppid'])
            key = f"(agents of a daemon {'not through DaemonProcess' if parent else 'gone or live'})"
        charged[key][2] += 1
        charged[key][3] += r['cpu']

by_command = collections.Counter()
count = collections.Counter()
for r in records:
    by_command[r['comm']] += r['cpu']
    count[r['comm']] += 1
print('CPU-s by command: ' + ', '.join(f'{c} {v:.0f} ({count[c]})' for c, v in by_command.most_common(6)))

samples = [line.split() for line in open(sys.argv[3]).readlines()[2:]]
# vmstat repeats its two header lines every screenful: only the numeric rows are samples.
samples = [f for f in samples if len(f) > 14 and f[0].isdigit()]
idle = [int(f[14]) for f in samples]
runnable = [int(f[0]) for f in samples]
if idle:
    print(f'vmstat: idle {sum(idle) / len(idle):.0f} % and {sum(runnable) / len(runnable):.1f} threads runnable on average')

print(f"{'CPU-s':>7} {'daemons':>7} {'CPU-s':>6} {'agents':>6} {'CPU-s':>6}  started by")
for key, (daemons, daemon_cpu, agents, agent_cpu) in sorted(charged.items(), key=lambda kv: -(kv[1][1] + kv[1][3])):
    print(f'{daemon_cpu + agent_cpu:7.1f} {daemons:7d} {daemon_cpu:6.1f} {agents:6d} {agent_cpu:6.1f}  {key}')
