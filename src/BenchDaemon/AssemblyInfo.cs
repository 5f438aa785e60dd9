[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]

// The store's failure paths (a database that cannot be opened, a locked one) are tested without a daemon process.
[assembly: System.Runtime.CompilerServices.InternalsVisibleTo("BenchDaemon.Tests")]
