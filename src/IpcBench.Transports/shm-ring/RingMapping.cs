using System.IO.MemoryMappedFiles;
using System.Runtime.Versioning;

namespace IpcBench.Transports.SharedMemory;

/// <summary>One MAP_SHARED read-write mapping of a whole ring file, held as a raw pointer until disposed.</summary>
[SupportedOSPlatform("linux")]
internal sealed unsafe class RingMapping : IDisposable
{
    private readonly MemoryMappedFile _file;
    private readonly MemoryMappedViewAccessor _view;
    private int _disposed;

    private RingMapping(string path, MemoryMappedFile file, long length)
    {
        Path = path;
        Length = length;
        _file = file;
        _view = file.CreateViewAccessor(0, length, MemoryMappedFileAccess.ReadWrite);
        byte* pointer = null;
        _view.SafeMemoryMappedViewHandle.AcquirePointer(ref pointer);
        Base = pointer + _view.PointerOffset;
    }

    public string Path { get; }

    public long Length { get; }

    public byte* Base { get; }

    /// <summary>Creates the file (it must not exist yet), owner read-write only, sized to <paramref name="length"/> (sparse: pages appear on first touch).</summary>
    public static RingMapping Create(string path, long length)
    {
        var stream = new FileStream(path, new FileStreamOptions
        {
            Mode = FileMode.CreateNew,
            Access = FileAccess.ReadWrite,
            Share = FileShare.ReadWrite | FileShare.Delete,
            UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite,
        });
        try
        {
            stream.SetLength(length);
            var file = MemoryMappedFile.CreateFromFile(stream, null, length, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: false);
            try
            {
                return new RingMapping(path, file, length);
            }
            catch
            {
                file.Dispose();
                throw;
            }
        }
        catch
        {
            stream.Dispose();
            File.Delete(path);
            throw;
        }
    }

    /// <summary>Maps an existing ring file. Only the length is checked here; <see cref="RingGeometry.Read"/> checks the header.</summary>
    public static RingMapping Open(string path)
    {
        FileStream stream;
        try
        {
            stream = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
        }
        catch (FileNotFoundException e)
        {
            throw new FileNotFoundException($"No shm-ring at {path}: its publisher has not created it or has already removed it.", path, e);
        }

        try
        {
            long length = stream.Length;
            if (length < RingLayout.ControlBytes)
            {
                throw new InvalidDataException(
                    $"{path} is not a usable shm-ring file: it is {length} bytes long, shorter than the {RingLayout.ControlBytes}-byte control block (truncated, or not a ring).");
            }

            var file = MemoryMappedFile.CreateFromFile(stream, null, 0, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: false);
            try
            {
                return new RingMapping(path, file, length);
            }
            catch
            {
                file.Dispose();
                throw;
            }
        }
        catch
        {
            stream.Dispose();
            throw;
        }
    }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
        _file.Dispose();
    }
}
