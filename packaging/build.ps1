# Builds the MemStrata bundle on Windows with PyInstaller: dist\memstrata\memstrata.exe (GUI,
# no console) and dist\memstrata\memstrata-cli.exe (console, headless commands). With
# -Installer it then compiles installer\windows\memstrata.iss with Inno Setup 6 (ISCC.exe).
#
#   powershell -ExecutionPolicy Bypass -File packaging\build.ps1 [-Installer]
#
# Parameters / environment:
#   -Python     interpreter for the build venv (default: $env:PYTHON, else "py -3.11")
#   -Venv       build venv folder (default build\venv; reused when present)
#   -TorchIndex extra index for torch, which builds the models only (default none: PyPI's
#               Windows torch wheel is CPU-only)
param(
    [string]$Python = $(if ($env:PYTHON) { $env:PYTHON } else { "py -3.11" }),
    [string]$Venv = "",
    [string]$TorchIndex = "",
    [switch]$Installer
)
$ErrorActionPreference = "Stop"
$Root = Resolve-Path (Join-Path $PSScriptRoot "..")
Set-Location $Root
if (-not $Venv) { $Venv = Join-Path $Root "build\venv" }
$TorchVersion = "2.13.0"
$sw = [Diagnostics.Stopwatch]::StartNew()

function Invoke-Checked([string]$exe, [string[]]$argv) {
    & $exe @argv
    if ($LASTEXITCODE -ne 0) { throw "$exe $($argv -join ' ') failed ($LASTEXITCODE)" }
}

$vpy = Join-Path $Venv "Scripts\python.exe"
if (-not (Test-Path $vpy)) {
    Write-Host "==> creating build venv $Venv"
    $parts = $Python -split " "
    Invoke-Checked $parts[0] (@($parts | Select-Object -Skip 1) + @("-m", "venv", $Venv))
}
Invoke-Checked $vpy @("-c", "import sys; assert sys.version_info >= (3, 11), sys.version")
$pip = @("-m", "pip", "install", "--disable-pip-version-check", "-q")
Invoke-Checked $vpy ($pip + @("--upgrade", "pip", "wheel", "setuptools"))

# 1. the models the bundle ships, where the checkout lacks them: the local embedder as one
#    ONNX graph and the static embedder, exported with torch in a venv of their own (the
#    bundle's venv never has torch: nothing in the bundle can depend on it).
$res = Join-Path $Root "memstrata_app\resources"
if (-not (Test-Path (Join-Path $res "minilm-onnx\embedder.json")) -or
    -not (Test-Path (Join-Path $res "static-minilm-m2v\build.json"))) {
    $mvenv = Join-Path $Root "build\models-venv"
    Write-Host "==> models (scripts\build_onnx_embedder.py, scripts\build_static_embedder.py) in $mvenv"
    $mpy = Join-Path $mvenv "Scripts\python.exe"
    if (-not (Test-Path $mpy)) {
        $parts = $Python -split " "
        Invoke-Checked $parts[0] (@($parts | Select-Object -Skip 1) + @("-m", "venv", $mvenv))
    }
    $torchArgs = @()
    if ($TorchIndex) { $torchArgs = @("--extra-index-url", $TorchIndex) }
    Invoke-Checked $mpy ($pip + $torchArgs + @("torch==$TorchVersion"))
    Invoke-Checked $mpy ($pip + @(("{0}[distill]" -f $Root)))
    $env:HF_HUB_OFFLINE = "1"
    Invoke-Checked $mpy @((Join-Path $Root "scripts\build_onnx_embedder.py"))
    Invoke-Checked $mpy @((Join-Path $Root "scripts\build_static_embedder.py"))
}

# 2. the app (not editable) and PyInstaller, without torch.
Write-Host "==> memstrata-desktop[proxy,gui] + pyinstaller"
Invoke-Checked $vpy ($pip + @(("{0}[proxy,gui]" -f $Root), "pyinstaller>=6.10", "pyinstaller-hooks-contrib"))
Invoke-Checked $vpy @("-c", "import importlib.util, sys; sys.exit('the build venv has torch: remove it' if importlib.util.find_spec('torch') else 0)")

# 3. the bundle.
Write-Host "==> pyinstaller packaging\memstrata.spec"
Invoke-Checked $vpy @("-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
    "--distpath", (Join-Path $Root "dist"), "--workpath", (Join-Path $Root "build\pyinstaller"),
    "packaging\memstrata.spec")

$out = Join-Path $Root "dist\memstrata"
$size = (Get-ChildItem $out -Recurse -File | Measure-Object Length -Sum).Sum / 1MB
Write-Host ("==> built {0} in {1:N0} s ({2:N0} MB)" -f $out, $sw.Elapsed.TotalSeconds, $size)

# 4. optional: the Inno Setup installer.
if ($Installer) {
    $version = (Select-String -Path "memstrata_app\__init__.py" -Pattern '__version__ = "(.+)"').Matches[0].Groups[1].Value
    $iscc = (Get-Command ISCC.exe -ErrorAction SilentlyContinue).Source
    if (-not $iscc) {
        foreach ($p in @("${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe", "$env:ProgramFiles\Inno Setup 6\ISCC.exe",
                         "$env:LOCALAPPDATA\Programs\Inno Setup 6\ISCC.exe")) {
            if (Test-Path $p) { $iscc = $p; break }
        }
    }
    if (-not $iscc) { throw "Inno Setup 6 (ISCC.exe) not found: install it (winget install JRSoftware.InnoSetup)" }
    Write-Host "==> $iscc installer\windows\memstrata.iss"
    Invoke-Checked $iscc @("/Qp", "/DMyAppVersion=$version", "installer\windows\memstrata.iss")
}
