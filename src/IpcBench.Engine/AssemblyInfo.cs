// The engine reads /proc, maps shared memory and sets Unix file modes: Linux only, as the daemon is.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
