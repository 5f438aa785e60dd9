// The engine is Linux only (it reads /proc and maps shared memory); so are its tests.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
