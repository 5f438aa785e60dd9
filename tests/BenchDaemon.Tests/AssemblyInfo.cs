// The daemon, its agents and these tests read /proc and send signals: Linux only.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]

// Three lanes side by side, never more: DaemonCollection (spinning, measuring, counting; one test at a time),
// LightCollection (neither spins nor measures; one at a time) and WaitCollection (waiting on the clock on a small share
// of a core). Every test class is in one of them (TestLaneTests).
[assembly: CollectionBehavior(MaxParallelThreads = 3)]
