; Inno Setup 6 script for MemStrata (Windows x64): a per-user install (no admin rights) of the
; PyInstaller bundle dist\memstrata\ built by packaging\build.ps1.
;
;   ISCC.exe /DMyAppVersion=0.1.0 installer\windows\memstrata.iss
;   (or: powershell -File packaging\build.ps1 -Installer)
;
; Output: dist\installer\MemStrata-<version>-setup.exe
; Installs to %LOCALAPPDATA%\Programs\MemStrata, adds a Start-menu shortcut, optionally a
; desktop shortcut and start-at-login (HKCU Run key), and registers an uninstaller.
; The user's ledger (%LOCALAPPDATA%\memstrata) is data, not program files: the uninstaller
; leaves it in place.

#ifndef MyAppVersion
  #define MyAppVersion "0.1.0"
#endif
#define MyAppName "MemStrata"
#define MyAppExe "memstrata.exe"
#define MyCliExe "memstrata-cli.exe"
#define Root "..\.."

[Setup]
AppId={{C81C5BA5-25AB-4152-AE14-9DF3CF1EB5B5}
AppName={#MyAppName}
AppVersion={#MyAppVersion}
AppVerName={#MyAppName} {#MyAppVersion}
AppPublisher=MemStrata
VersionInfoVersion={#MyAppVersion}
; per-user: no UAC prompt; {autopf} resolves to %LOCALAPPDATA%\Programs
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
DefaultDirName={autopf}\{#MyAppName}
DefaultGroupName={#MyAppName}
DisableProgramGroupPage=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir={#Root}\dist\installer
OutputBaseFilename=MemStrata-{#MyAppVersion}-setup
SetupIconFile={#Root}\resources\memstrata.ico
UninstallDisplayIcon={app}\{#MyAppExe}
UninstallDisplayName={#MyAppName}
; torch + Qt + the model: lzma2 at max is slow but roughly halves the download
Compression=lzma2/max
SolidCompression=yes
LZMAUseSeparateProcess=yes
WizardStyle=modern
; close a running MemStrata before files are replaced or removed
CloseApplications=yes
RestartApplications=no

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "startup"; Description: "Start MemStrata when I sign in (tray icon)"; GroupDescription: "Startup:"; Flags: unchecked

[Files]
Source: "{#Root}\dist\memstrata\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#MyAppName}"; Filename: "{app}\{#MyAppExe}"; WorkingDir: "{app}"
Name: "{autodesktop}\{#MyAppName}"; Filename: "{app}\{#MyAppExe}"; WorkingDir: "{app}"; Tasks: desktopicon

[Registry]
; start at login for this user only; removed by the uninstaller
Root: HKCU; Subkey: "Software\Microsoft\Windows\CurrentVersion\Run"; ValueType: string; ValueName: "{#MyAppName}"; ValueData: """{app}\{#MyAppExe}"""; Flags: uninsdeletevalue; Tasks: startup

[Run]
Filename: "{app}\{#MyAppExe}"; Description: "{cm:LaunchProgram,{#MyAppName}}"; Flags: nowait postinstall skipifsilent

[UninstallRun]
; stop a running app (tray) so its files can be removed
Filename: "{sys}\taskkill.exe"; Parameters: "/F /IM {#MyAppExe}"; Flags: runhidden; RunOnceId: "StopMemStrata"
Filename: "{sys}\taskkill.exe"; Parameters: "/F /IM {#MyCliExe}"; Flags: runhidden; RunOnceId: "StopMemStrataCli"
