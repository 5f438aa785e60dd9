// The daemon, its agents and these tests read /proc and send signals: Linux only.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]

// Belt and braces beside DaemonCollection: measurements must never share the machine with another test.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
