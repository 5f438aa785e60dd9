using System.Numerics;

namespace IpcBench.Transports.SharedMemory;

/// <summary>
/// Byte offsets of a shm-ring file (see README.md beside this file for the picture). Everything is little-endian and
/// naturally aligned; fields written by different parties live on different 64-byte cache lines.
/// </summary>
internal static class RingLayout
{
    /// <summary>"IPCBRING" read as a little-endian 64-bit integer.</summary>
    public const ulong Magic = 0x474E495242435049;

    /// <summary>
    /// 3: a slot's data starts 32 bytes in, on a line of its own, wherever that costs the slot no extra line (version 2
    /// always started it 24 bytes in). 2: each slot carries its own sequence word and there is no shared published
    /// counter (version 1 had one at offset 128). A reader of one version refuses a file of another, naming both.
    /// </summary>
    public const int Version = 3;
    public const int CacheLine = 64;
    public const int PageBytes = 4096;

    public const int ControlBytes = 4096;
    public const int CursorBytes = 256;
    /// <summary>The slot header's fields: sequence word, length | chunk length, index | count.</summary>
    public const int SlotHeaderFieldBytes = 24;

    /// <summary>The slot header padded so the data after it, and a message's payload after its 32-byte header, start a line.</summary>
    public const int LineSlotHeaderBytes = 32;
    public const int ReplySlotBytes = 128;
    public const int ReplyHeaderBytes = 8;
    public const int ReplySlotCount = 16;
    public const int MaxSlotCount = 1 << 20;
    public const int MaxSubscribersLimit = 4096;

    // Control block, lines 0-1: identity and geometry, written once by the publisher (Magic last).
    public const int MagicOffset = 0;
    public const int VersionOffset = 8;
    public const int ControlBytesOffset = 12;
    public const int SlotBytesOffset = 16;
    public const int SlotDataBytesOffset = 20;
    public const int SlotCountOffset = 24;
    public const int MaxSubscribersOffset = 28;
    public const int CursorBytesOffset = 32;
    public const int ReplySlotBytesOffset = 36;
    public const int ReplySlotCountOffset = 40;
    public const int MaxMessageBytesOffset = 44;
    public const int FileBytesOffset = 48;
    public const int OwnerPidOffset = 56;
    public const int PublisherIndexOffset = 60;
    public const int CursorTableOffsetOffset = 64;
    public const int ReplyAreaOffsetOffset = 72;
    public const int SlotsOffsetOffset = 80;
    public const int PublisherWaitModeOffset = 88;

    // Line 2: written by the publisher only when a reader sleeps (BLOCK) and at close; nothing here is written per
    // message: readers learn what is published from each slot's own sequence word.
    public const int DataSignalOffset = 136;
    public const int ClosedOffset = 140;

    // Line 3: written by subscribers about to sleep.
    public const int DataWaitersOffset = 192;

    // Line 4: written by the publisher about to sleep.
    public const int WaitingForSpaceOffset = 256;
    public const int WaitingForReplyOffset = 260;
    public const int WakeAtOffset = 264;

    // Line 5: written by subscribers waking the publisher.
    public const int PublisherSignalOffset = 320;

    // Cursor record (one per subscriber slot, CursorBytes apart). Line 0 is the subscriber's.
    public const int CursorOffset = 0;
    public const int StateOffset = 8;
    public const int PidOffset = 12;
    public const int HeartbeatOffset = 16;
    public const int SubscriberIndexOffset = 24;
    public const int ReplyWrittenOffset = 64;
    public const int ReplyReadOffset = 128;

    // Slot header (RingGeometry.SlotHeaderBytes in front of each slot's data). The sequence word says the slot holds
    // position s (it reads s + 1; 0 = never written); the publisher writes it last, with release, so a reader that sees
    // it sees the header and data before it. An 8 B payload's slot (24 + 32 + 8 bytes) is still one cache line.
    public const int SlotSequenceOffset = 0;

    // Written as two 8-byte words (length | chunk length, index | count): keep each pair adjacent and 8-aligned.
    public const int MessageLengthOffset = 8;
    public const int ChunkLengthOffset = 12;
    public const int ChunkIndexOffset = 16;
    public const int ChunkCountOffset = 20;

    public static long AlignUp(long value, long alignment) => (value + alignment - 1) / alignment * alignment;
}

/// <summary>Life cycle of a cursor record; who moves it from where to where is in README.md.</summary>
internal static class CursorState
{
    public const int Free = 0;
    public const int Claimed = 1;
    public const int Requested = 2;
    public const int Active = 3;
    public const int Detached = 4;
    public const int Evicted = 5;
}

/// <summary>The sizes a ring is made of; the offsets follow from them.</summary>
internal readonly record struct RingGeometry(int SlotDataBytes, int SlotCount, int MaxSubscribers, int MaxMessageBytes)
{
    public int SlotBytes => (int)SlotBytesFor(SlotDataBytes);

    /// <summary>
    /// Where a slot's data starts: 32 bytes in, so a message's payload starts a line and the slot's first line holds only
    /// headers and the sequence word that readers poll, unless that takes the slot a line more than the fields' 24 do
    /// (an 8 B payload's slot stays one line). With the payload 24 bytes in, 1 KiB 1:1 YIELD ran at 0.88-0.92 of layout
    /// 1's on the Intel host; 32 bytes in, 1.08, 1.09 and 0.92 of version 2's in three A/Bs, no shift the rank tests
    /// could tell (docs/results.md, 2026-11-30): kept for the line readers poll holding headers only, not for a gain shown.
    /// </summary>
    public int SlotHeaderBytes => HeaderBytesFor(SlotDataBytes);

    public static int HeaderBytesFor(int slotDataBytes) =>
        RingLayout.AlignUp(RingLayout.LineSlotHeaderBytes + (long)slotDataBytes, RingLayout.CacheLine) == SlotBytesFor(slotDataBytes)
            ? RingLayout.LineSlotHeaderBytes
            : RingLayout.SlotHeaderFieldBytes;

    /// <summary>Whole lines holding the slot header's fields and <paramref name="slotDataBytes"/> of data.</summary>
    private static long SlotBytesFor(long slotDataBytes) => RingLayout.AlignUp(RingLayout.SlotHeaderFieldBytes + slotDataBytes, RingLayout.CacheLine);

    public long CursorTableOffset => RingLayout.ControlBytes;

    public long ReplyAreaOffset => CursorTableOffset + (long)MaxSubscribers * RingLayout.CursorBytes;

    public static int ReplyRingBytes => RingLayout.ReplySlotCount * RingLayout.ReplySlotBytes;

    public long SlotsOffset => RingLayout.AlignUp(ReplyAreaOffset + (long)MaxSubscribers * ReplyRingBytes, RingLayout.PageBytes);

    public long FileBytes => SlotsOffset + (long)SlotCount * SlotBytes;

    public long RingBytes => (long)SlotCount * SlotBytes;

    public static RingGeometry Compute(int maxMessageBytes, int subscribers, ShmRingSettings settings)
    {
        settings.Validate();
        // A slot never needs to be larger than the largest message: small messages get small, dense slots.
        int dataBytes = Math.Min(settings.SlotDataBytes, maxMessageBytes);
        long slotBytes = SlotBytesFor(dataBytes);
        long fit = Math.Clamp(settings.RingBytes / slotBytes, 2, Math.Min(settings.MaxSlots, RingLayout.MaxSlotCount));
        int slotCount = 1 << BitOperations.Log2((ulong)fit);
        int maxSubscribers = Math.Clamp(subscribers + 8, 1, RingLayout.MaxSubscribersLimit);
        return new RingGeometry(dataBytes, slotCount, maxSubscribers, maxMessageBytes);
    }

    public unsafe void Write(byte* file, int ownerPid, int publisherIndex, WaitMode waitMode)
    {
        *(int*)(file + RingLayout.VersionOffset) = RingLayout.Version;
        *(int*)(file + RingLayout.ControlBytesOffset) = RingLayout.ControlBytes;
        *(int*)(file + RingLayout.SlotBytesOffset) = SlotBytes;
        *(int*)(file + RingLayout.SlotDataBytesOffset) = SlotDataBytes;
        *(int*)(file + RingLayout.SlotCountOffset) = SlotCount;
        *(int*)(file + RingLayout.MaxSubscribersOffset) = MaxSubscribers;
        *(int*)(file + RingLayout.CursorBytesOffset) = RingLayout.CursorBytes;
        *(int*)(file + RingLayout.ReplySlotBytesOffset) = RingLayout.ReplySlotBytes;
        *(int*)(file + RingLayout.ReplySlotCountOffset) = RingLayout.ReplySlotCount;
        *(int*)(file + RingLayout.MaxMessageBytesOffset) = MaxMessageBytes;
        *(long*)(file + RingLayout.FileBytesOffset) = FileBytes;
        *(int*)(file + RingLayout.OwnerPidOffset) = ownerPid;
        *(int*)(file + RingLayout.PublisherIndexOffset) = publisherIndex;
        *(long*)(file + RingLayout.CursorTableOffsetOffset) = CursorTableOffset;
        *(long*)(file + RingLayout.ReplyAreaOffsetOffset) = ReplyAreaOffset;
        *(long*)(file + RingLayout.SlotsOffsetOffset) = SlotsOffset;
        *(int*)(file + RingLayout.PublisherWaitModeOffset) = (int)waitMode;
        // Last, with release semantics: a reader that sees the magic sees everything above.
        Volatile.Write(ref *(ulong*)(file + RingLayout.MagicOffset), RingLayout.Magic);
    }

    /// <summary>Reads and checks the header of a mapped ring file; throws <see cref="InvalidDataException"/> saying what is wrong.</summary>
    public static unsafe RingGeometry Read(byte* file, long fileLength, string path)
    {
        if (fileLength < RingLayout.ControlBytes)
        {
            throw Refused(path, $"it is {fileLength} bytes long, shorter than the {RingLayout.ControlBytes}-byte control block (truncated, or not a ring)");
        }

        ulong magic = Volatile.Read(ref *(ulong*)(file + RingLayout.MagicOffset));
        if (magic != RingLayout.Magic)
        {
            throw Refused(path, $"bad magic 0x{magic:X16}, expected 0x{RingLayout.Magic:X16} (\"IPCBRING\"): not an ipcbench shm-ring file, or its publisher has not finished creating it");
        }

        int version = *(int*)(file + RingLayout.VersionOffset);
        if (version != RingLayout.Version)
        {
            throw Refused(path, $"layout version {version}; this build reads version {RingLayout.Version}");
        }

        int controlBytes = *(int*)(file + RingLayout.ControlBytesOffset);
        int slotBytes = *(int*)(file + RingLayout.SlotBytesOffset);
        int slotDataBytes = *(int*)(file + RingLayout.SlotDataBytesOffset);
        int slotCount = *(int*)(file + RingLayout.SlotCountOffset);
        int maxSubscribers = *(int*)(file + RingLayout.MaxSubscribersOffset);
        int cursorBytes = *(int*)(file + RingLayout.CursorBytesOffset);
        int replySlotBytes = *(int*)(file + RingLayout.ReplySlotBytesOffset);
        int replySlotCount = *(int*)(file + RingLayout.ReplySlotCountOffset);
        int maxMessageBytes = *(int*)(file + RingLayout.MaxMessageBytesOffset);
        long fileBytes = *(long*)(file + RingLayout.FileBytesOffset);

        Check(path, controlBytes == RingLayout.ControlBytes, $"control block of {controlBytes} bytes, expected {RingLayout.ControlBytes}");
        Check(path, cursorBytes == RingLayout.CursorBytes, $"cursor records of {cursorBytes} bytes, expected {RingLayout.CursorBytes}");
        Check(path, replySlotBytes == RingLayout.ReplySlotBytes && replySlotCount == RingLayout.ReplySlotCount,
            $"reply rings of {replySlotCount} x {replySlotBytes} bytes, expected {RingLayout.ReplySlotCount} x {RingLayout.ReplySlotBytes}");
        Check(path, slotCount >= 2 && slotCount <= RingLayout.MaxSlotCount && BitOperations.IsPow2(slotCount),
            $"slot count {slotCount} is not a power of two between 2 and {RingLayout.MaxSlotCount}");
        Check(path, slotDataBytes > 0, $"slot data size {slotDataBytes}");
        Check(path, maxMessageBytes >= MessageHeader.Size, $"maximum message size {maxMessageBytes} is smaller than a message header");
        Check(path, maxSubscribers >= 1 && maxSubscribers <= RingLayout.MaxSubscribersLimit, $"{maxSubscribers} subscriber slots");

        var geometry = new RingGeometry(slotDataBytes, slotCount, maxSubscribers, maxMessageBytes);
        Check(path, slotBytes == geometry.SlotBytes, $"slot size {slotBytes} does not match its data size {slotDataBytes} (expected {geometry.SlotBytes})");
        Check(path, *(long*)(file + RingLayout.CursorTableOffsetOffset) == geometry.CursorTableOffset
                    && *(long*)(file + RingLayout.ReplyAreaOffsetOffset) == geometry.ReplyAreaOffset
                    && *(long*)(file + RingLayout.SlotsOffsetOffset) == geometry.SlotsOffset,
            "section offsets do not follow from the sizes");
        Check(path, fileBytes == geometry.FileBytes, $"declared file size {fileBytes} does not follow from the sizes (expected {geometry.FileBytes})");
        if (fileLength < fileBytes)
        {
            throw Refused(path, $"truncated: the file is {fileLength} bytes, its header declares {fileBytes}");
        }

        return geometry;
    }

    private static void Check(string path, bool condition, string problem)
    {
        if (!condition)
        {
            throw Refused(path, $"inconsistent header: {problem}");
        }
    }

    private static InvalidDataException Refused(string path, string reason) => new($"{path} is not a usable shm-ring file: {reason}.");
}
