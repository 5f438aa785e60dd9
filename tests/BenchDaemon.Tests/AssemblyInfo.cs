// The daemon, its agents and these tests read /proc and send signals: Linux only.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]

// Two lanes side by side, never more: DaemonCollection (spinning, measuring, counting; one test at a time) and
// LightCollection (neither spins nor measures; one at a time). Every test class is in one of them (TestLaneTests).
[assembly: CollectionBehavior(MaxParallelThreads = 2)]
