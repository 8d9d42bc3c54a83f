// Apple's UserNotifications re-exports Foundation: code written for it uses Date, UUID, Calendar,
// DateComponents, TimeInterval and DispatchQueue with `import UserNotifications` alone. So does this
// module (Foundation on Linux re-exports Dispatch, as Apple's does).
@_exported import Foundation
