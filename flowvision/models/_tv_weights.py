"""torchvision checkpoints as data: builder -> (enum name, DEFAULT member, members).

Each member: (name, file under https://download.pytorch.org/models/ (its sha256 prefix after the last "-"),
num_params, min_size, crop size, resize size, interpolation, ImageNet-1K acc@1, acc@5[, preset overrides
such as mean/std]) - the ImageNet-1k
classification weights of torchvision 0.29 (incl. SWAG), taken once from torchvision's enums.
"""

TV_URL = "https://download.pytorch.org/models/"

TV_WEIGHTS = {
    "resnet18": ("ResNet18_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "resnet18-f37072fd.pth", 11689512, (1, 1), 224, 256, "bilinear", 69.758, 89.078),
    ]),
    "resnet34": ("ResNet34_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "resnet34-b627a593.pth", 21797672, (1, 1), 224, 256, "bilinear", 73.314, 91.42),
    ]),
    "resnet50": ("ResNet50_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnet50-0676ba61.pth", 25557032, (1, 1), 224, 256, "bilinear", 76.13, 92.862),
        ("IMAGENET1K_V2", "resnet50-11ad3fa6.pth", 25557032, (1, 1), 224, 232, "bilinear", 80.858, 95.434),
    ]),
    "resnet101": ("ResNet101_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnet101-63fe2227.pth", 44549160, (1, 1), 224, 256, "bilinear", 77.374, 93.546),
        ("IMAGENET1K_V2", "resnet101-cd907fc2.pth", 44549160, (1, 1), 224, 232, "bilinear", 81.886, 95.78),
    ]),
    "resnet152": ("ResNet152_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnet152-394f9c45.pth", 60192808, (1, 1), 224, 256, "bilinear", 78.312, 94.046),
        ("IMAGENET1K_V2", "resnet152-f82ba261.pth", 60192808, (1, 1), 224, 232, "bilinear", 82.284, 96.002),
    ]),
    "resnext50_32x4d": ("ResNeXt50_32X4D_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnext50_32x4d-7cdf4587.pth", 25028904, (1, 1), 224, 256, "bilinear", 77.618, 93.698),
        ("IMAGENET1K_V2", "resnext50_32x4d-1a0047aa.pth", 25028904, (1, 1), 224, 232, "bilinear", 81.198, 95.34),
    ]),
    "resnext101_32x8d": ("ResNeXt101_32X8D_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnext101_32x8d-8ba56ff5.pth", 88791336, (1, 1), 224, 256, "bilinear", 79.312, 94.526),
        ("IMAGENET1K_V2", "resnext101_32x8d-110c445d.pth", 88791336, (1, 1), 224, 232, "bilinear", 82.834, 96.228),
    ]),
    "resnext101_64x4d": ("ResNeXt101_64X4D_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "resnext101_64x4d-173b62eb.pth", 83455272, (1, 1), 224, 232, "bilinear", 83.246, 96.454),
    ]),
    "wide_resnet50_2": ("Wide_ResNet50_2_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "wide_resnet50_2-95faca4d.pth", 68883240, (1, 1), 224, 256, "bilinear", 78.468, 94.086),
        ("IMAGENET1K_V2", "wide_resnet50_2-9ba9bcbe.pth", 68883240, (1, 1), 224, 232, "bilinear", 81.602, 95.758),
    ]),
    "wide_resnet101_2": ("Wide_ResNet101_2_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "wide_resnet101_2-32ee1156.pth", 126886696, (1, 1), 224, 256, "bilinear", 78.848, 94.284),
        ("IMAGENET1K_V2", "wide_resnet101_2-d733dc28.pth", 126886696, (1, 1), 224, 232, "bilinear", 82.51, 96.02),
    ]),
    "vgg11": ("VGG11_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg11-8a719046.pth", 132863336, (32, 32), 224, 256, "bilinear", 69.02, 88.628),
    ]),
    "vgg11_bn": ("VGG11_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg11_bn-6002323d.pth", 132868840, (32, 32), 224, 256, "bilinear", 70.37, 89.81),
    ]),
    "vgg13": ("VGG13_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg13-19584684.pth", 133047848, (32, 32), 224, 256, "bilinear", 69.928, 89.246),
    ]),
    "vgg13_bn": ("VGG13_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg13_bn-abd245e5.pth", 133053736, (32, 32), 224, 256, "bilinear", 71.586, 90.374),
    ]),
    "vgg16": ("VGG16_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg16-397923af.pth", 138357544, (32, 32), 224, 256, "bilinear", 71.592, 90.382),
    ]),
    "vgg16_bn": ("VGG16_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg16_bn-6c64b313.pth", 138365992, (32, 32), 224, 256, "bilinear", 73.36, 91.516),
    ]),
    "vgg19": ("VGG19_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg19-dcbb9e9d.pth", 143667240, (32, 32), 224, 256, "bilinear", 72.376, 90.876),
    ]),
    "vgg19_bn": ("VGG19_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg19_bn-c79401a0.pth", 143678248, (32, 32), 224, 256, "bilinear", 74.218, 91.842),
    ]),
    "densenet121": ("DenseNet121_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet121-a639ec97.pth", 7978856, (29, 29), 224, 256, "bilinear", 74.434, 91.972),
    ]),
    "densenet161": ("DenseNet161_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet161-8d451a50.pth", 28681000, (29, 29), 224, 256, "bilinear", 77.138, 93.56),
    ]),
    "densenet169": ("DenseNet169_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet169-b2777c0a.pth", 14149480, (29, 29), 224, 256, "bilinear", 75.6, 92.806),
    ]),
    "densenet201": ("DenseNet201_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet201-c1103571.pth", 20013928, (29, 29), 224, 256, "bilinear", 76.896, 93.37),
    ]),
    "mobilenet_v2": ("MobileNet_V2_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "mobilenet_v2-b0353104.pth", 3504872, (1, 1), 224, 256, "bilinear", 71.878, 90.286),
        ("IMAGENET1K_V2", "mobilenet_v2-7ebf99e0.pth", 3504872, (1, 1), 224, 232, "bilinear", 72.154, 90.822),
    ]),
    "mobilenet_v3_large": ("MobileNet_V3_Large_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "mobilenet_v3_large-8738ca79.pth", 5483032, (1, 1), 224, 256, "bilinear", 74.042, 91.34),
        ("IMAGENET1K_V2", "mobilenet_v3_large-5c1a4163.pth", 5483032, (1, 1), 224, 232, "bilinear", 75.274, 92.566),
    ]),
    "mobilenet_v3_small": ("MobileNet_V3_Small_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mobilenet_v3_small-047dcff4.pth", 2542856, (1, 1), 224, 256, "bilinear", 67.668, 87.402),
    ]),
    "vit_b_16": ("ViT_B_16_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_b_16-c867db91.pth", 86567656, (224, 224), 224, 256, "bilinear", 81.072, 95.318),
        ("IMAGENET1K_SWAG_E2E_V1", "vit_b_16_swag-9ac1b537.pth", 86859496, (384, 384), 384, 384, "bicubic", 85.304, 97.65),
        ("IMAGENET1K_SWAG_LINEAR_V1", "vit_b_16_lc_swag-4e70ced5.pth", 86567656, (224, 224), 224, 224, "bicubic", 81.886, 96.18),
    ]),
    "vit_b_32": ("ViT_B_32_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_b_32-d86f8d99.pth", 88224232, (224, 224), 224, 256, "bilinear", 75.912, 92.466),
    ]),
    "vit_l_16": ("ViT_L_16_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_l_16-852ce7e3.pth", 304326632, (224, 224), 224, 242, "bilinear", 79.662, 94.638),
        ("IMAGENET1K_SWAG_E2E_V1", "vit_l_16_swag-4f3808c9.pth", 305174504, (512, 512), 512, 512, "bicubic", 88.064, 98.512),
        ("IMAGENET1K_SWAG_LINEAR_V1", "vit_l_16_lc_swag-4d563306.pth", 304326632, (224, 224), 224, 224, "bicubic", 85.146, 97.422),
    ]),
    "vit_l_32": ("ViT_L_32_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_l_32-c7638314.pth", 306535400, (224, 224), 224, 256, "bilinear", 76.972, 93.07),
    ]),
    "vit_h_14": ("ViT_H_14_Weights", "IMAGENET1K_SWAG_E2E_V1", [
        ("IMAGENET1K_SWAG_E2E_V1", "vit_h_14_swag-80465313.pth", 633470440, (518, 518), 518, 518, "bicubic", 88.552, 98.694),
        ("IMAGENET1K_SWAG_LINEAR_V1", "vit_h_14_lc_swag-c1eb923e.pth", 632045800, (224, 224), 224, 224, "bicubic", 85.708, 97.73),
    ]),
    "swin_t": ("Swin_T_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_t-704ceda3.pth", 28288354, (224, 224), 224, 232, "bicubic", 81.474, 95.776),
    ]),
    "swin_s": ("Swin_S_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_s-5e29d889.pth", 49606258, (224, 224), 224, 246, "bicubic", 83.196, 96.36),
    ]),
    "swin_b": ("Swin_B_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_b-68c6b09e.pth", 87768224, (224, 224), 224, 238, "bicubic", 83.582, 96.64),
    ]),
    "convnext_tiny": ("ConvNeXt_Tiny_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_tiny-983f1562.pth", 28589128, (32, 32), 224, 236, "bilinear", 82.52, 96.146),
    ]),
    "convnext_small": ("ConvNeXt_Small_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_small-0c510722.pth", 50223688, (32, 32), 224, 230, "bilinear", 83.616, 96.65),
    ]),
    "convnext_base": ("ConvNeXt_Base_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_base-6075fbad.pth", 88591464, (32, 32), 224, 232, "bilinear", 84.062, 96.87),
    ]),
    "convnext_large": ("ConvNeXt_Large_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_large-ea097f82.pth", 197767336, (32, 32), 224, 232, "bilinear", 84.414, 96.976),
    ]),
    "efficientnet_b0": ("EfficientNet_B0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b0_rwightman-7f5810bc.pth", 5288548, (1, 1), 224, 256, "bicubic", 77.692, 93.532),
    ]),
    "efficientnet_b1": ("EfficientNet_B1_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "efficientnet_b1_rwightman-bac287d4.pth", 7794184, (1, 1), 240, 256, "bicubic", 78.642, 94.186),
        ("IMAGENET1K_V2", "efficientnet_b1-c27df63c.pth", 7794184, (1, 1), 240, 255, "bilinear", 79.838, 94.934),
    ]),
    "efficientnet_b2": ("EfficientNet_B2_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b2_rwightman-c35c1473.pth", 9109994, (1, 1), 288, 288, "bicubic", 80.608, 95.31),
    ]),
    "efficientnet_b3": ("EfficientNet_B3_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b3_rwightman-b3899882.pth", 12233232, (1, 1), 300, 320, "bicubic", 82.008, 96.054),
    ]),
    "efficientnet_b4": ("EfficientNet_B4_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b4_rwightman-23ab8bcd.pth", 19341616, (1, 1), 380, 384, "bicubic", 83.384, 96.594),
    ]),
    "efficientnet_b5": ("EfficientNet_B5_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b5_lukemelas-1a07897c.pth", 30389784, (1, 1), 456, 456, "bicubic", 83.444, 96.628),
    ]),
    "efficientnet_b6": ("EfficientNet_B6_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b6_lukemelas-24a108a5.pth", 43040704, (1, 1), 528, 528, "bicubic", 84.008, 96.916),
    ]),
    "efficientnet_b7": ("EfficientNet_B7_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b7_lukemelas-c5b4e57e.pth", 66347960, (1, 1), 600, 600, "bicubic", 84.122, 96.908),
    ]),
    "regnet_y_400mf": ("RegNet_Y_400MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_400mf-c65dace8.pth", 4344144, (1, 1), 224, 256, "bilinear", 74.046, 91.716),
        ("IMAGENET1K_V2", "regnet_y_400mf-e6988f5f.pth", 4344144, (1, 1), 224, 232, "bilinear", 75.804, 92.742),
    ]),
    "regnet_y_800mf": ("RegNet_Y_800MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_800mf-1b27b58c.pth", 6432512, (1, 1), 224, 256, "bilinear", 76.42, 93.136),
        ("IMAGENET1K_V2", "regnet_y_800mf-58fc7688.pth", 6432512, (1, 1), 224, 232, "bilinear", 78.828, 94.502),
    ]),
    "regnet_y_1_6gf": ("RegNet_Y_1_6GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_1_6gf-b11a554e.pth", 11202430, (1, 1), 224, 256, "bilinear", 77.95, 93.966),
        ("IMAGENET1K_V2", "regnet_y_1_6gf-0d7bc02a.pth", 11202430, (1, 1), 224, 232, "bilinear", 80.876, 95.444),
    ]),
    "regnet_y_3_2gf": ("RegNet_Y_3_2GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_3_2gf-b5a9779c.pth", 19436338, (1, 1), 224, 256, "bilinear", 78.948, 94.576),
        ("IMAGENET1K_V2", "regnet_y_3_2gf-9180c971.pth", 19436338, (1, 1), 224, 232, "bilinear", 81.982, 95.972),
    ]),
    "regnet_y_8gf": ("RegNet_Y_8GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_8gf-d0d0e4a8.pth", 39381472, (1, 1), 224, 256, "bilinear", 80.032, 95.048),
        ("IMAGENET1K_V2", "regnet_y_8gf-dc2b1b54.pth", 39381472, (1, 1), 224, 232, "bilinear", 82.828, 96.33),
    ]),
    "regnet_y_16gf": ("RegNet_Y_16GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_16gf-9e6ed7dd.pth", 83590140, (1, 1), 224, 256, "bilinear", 80.424, 95.24),
        ("IMAGENET1K_V2", "regnet_y_16gf-3e4a00f9.pth", 83590140, (1, 1), 224, 232, "bilinear", 82.886, 96.328),
        ("IMAGENET1K_SWAG_E2E_V1", "regnet_y_16gf_swag-43afe44d.pth", 83590140, (1, 1), 384, 384, "bicubic", 86.012, 98.054),
        ("IMAGENET1K_SWAG_LINEAR_V1", "regnet_y_16gf_lc_swag-f3ec0043.pth", 83590140, (1, 1), 224, 224, "bicubic", 83.976, 97.244),
    ]),
    "regnet_y_32gf": ("RegNet_Y_32GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_32gf-4dee3f7a.pth", 145046770, (1, 1), 224, 256, "bilinear", 80.878, 95.34),
        ("IMAGENET1K_V2", "regnet_y_32gf-8db6d4b5.pth", 145046770, (1, 1), 224, 232, "bilinear", 83.368, 96.498),
        ("IMAGENET1K_SWAG_E2E_V1", "regnet_y_32gf_swag-04fdfa75.pth", 145046770, (1, 1), 384, 384, "bicubic", 86.838, 98.362),
        ("IMAGENET1K_SWAG_LINEAR_V1", "regnet_y_32gf_lc_swag-e1583746.pth", 145046770, (1, 1), 224, 224, "bicubic", 84.622, 97.48),
    ]),
    "regnet_x_400mf": ("RegNet_X_400MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_400mf-adf1edd5.pth", 5495976, (1, 1), 224, 256, "bilinear", 72.834, 90.95),
        ("IMAGENET1K_V2", "regnet_x_400mf-62229a5f.pth", 5495976, (1, 1), 224, 232, "bilinear", 74.864, 92.322),
    ]),
    "regnet_x_800mf": ("RegNet_X_800MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_800mf-ad17e45c.pth", 7259656, (1, 1), 224, 256, "bilinear", 75.212, 92.348),
        ("IMAGENET1K_V2", "regnet_x_800mf-94a99ebd.pth", 7259656, (1, 1), 224, 232, "bilinear", 77.522, 93.826),
    ]),
    "regnet_x_1_6gf": ("RegNet_X_1_6GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_1_6gf-e3633e7f.pth", 9190136, (1, 1), 224, 256, "bilinear", 77.04, 93.44),
        ("IMAGENET1K_V2", "regnet_x_1_6gf-a12f2b72.pth", 9190136, (1, 1), 224, 232, "bilinear", 79.668, 94.922),
    ]),
    "regnet_x_3_2gf": ("RegNet_X_3_2GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_3_2gf-f342aeae.pth", 15296552, (1, 1), 224, 256, "bilinear", 78.364, 93.992),
        ("IMAGENET1K_V2", "regnet_x_3_2gf-7071aa85.pth", 15296552, (1, 1), 224, 232, "bilinear", 81.196, 95.43),
    ]),
    "regnet_x_8gf": ("RegNet_X_8GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_8gf-03ceed89.pth", 39572648, (1, 1), 224, 256, "bilinear", 79.344, 94.686),
        ("IMAGENET1K_V2", "regnet_x_8gf-2b70d774.pth", 39572648, (1, 1), 224, 232, "bilinear", 81.682, 95.678),
    ]),
    "regnet_x_16gf": ("RegNet_X_16GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_16gf-2007eb11.pth", 54278536, (1, 1), 224, 256, "bilinear", 80.058, 94.944),
        ("IMAGENET1K_V2", "regnet_x_16gf-ba3796d7.pth", 54278536, (1, 1), 224, 232, "bilinear", 82.716, 96.196),
    ]),
    "regnet_x_32gf": ("RegNet_X_32GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_32gf-9d47f8d0.pth", 107811560, (1, 1), 224, 256, "bilinear", 80.622, 95.248),
        ("IMAGENET1K_V2", "regnet_x_32gf-6eb8fdc6.pth", 107811560, (1, 1), 224, 232, "bilinear", 83.014, 96.288),
    ]),
    "alexnet": ("AlexNet_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "alexnet-owt-7be5be79.pth", 61100840, (63, 63), 224, 256, "bilinear", 56.522, 79.066),
    ]),
    "efficientnet_v2_l": ("EfficientNet_V2_L_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_v2_l-59c71312.pth", 118515272, (33, 33), 480, 480, "bicubic", 85.808, 97.788,
         dict(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))),
    ]),
    "efficientnet_v2_m": ("EfficientNet_V2_M_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_v2_m-dc08266a.pth", 54139356, (33, 33), 480, 480, "bilinear", 85.112, 97.156),
    ]),
    "efficientnet_v2_s": ("EfficientNet_V2_S_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_v2_s-dd5fe13b.pth", 21458488, (33, 33), 384, 384, "bilinear", 84.228, 96.878),
    ]),
    "googlenet": ("GoogLeNet_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "googlenet-1378be20.pth", 6624904, (15, 15), 224, 256, "bilinear", 69.778, 89.53),
    ]),
    "inception_v3": ("Inception_V3_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "inception_v3_google-0cc3c7bd.pth", 27161264, (75, 75), 299, 342, "bilinear", 77.294, 93.45),
    ]),
    "maxvit_t": ("MaxVit_T_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "maxvit_t-bc5ab103.pth", 30919624, (224, 224), 224, 224, "bicubic", 83.7, 96.722),
    ]),
    "mnasnet0_5": ("MNASNet0_5_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mnasnet0.5_top1_67.823-3ffadce67e.pth", 2218512, (1, 1), 224, 256, "bilinear", 67.734, 87.49),
    ]),
    "mnasnet0_75": ("MNASNet0_75_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mnasnet0_75-7090bc5f.pth", 3170208, (1, 1), 224, 232, "bilinear", 71.18, 90.496),
    ]),
    "mnasnet1_0": ("MNASNet1_0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mnasnet1.0_top1_73.512-f206786ef8.pth", 4383312, (1, 1), 224, 256, "bilinear", 73.456, 91.51),
    ]),
    "mnasnet1_3": ("MNASNet1_3_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mnasnet1_3-a4c69d6f.pth", 6282256, (1, 1), 224, 232, "bilinear", 76.506, 93.522),
    ]),
    "regnet_y_128gf": ("RegNet_Y_128GF_Weights", "IMAGENET1K_SWAG_E2E_V1", [
        ("IMAGENET1K_SWAG_E2E_V1", "regnet_y_128gf_swag-c8ce3e52.pth", 644812894, (1, 1), 384, 384, "bicubic", 88.228, 98.682),
        ("IMAGENET1K_SWAG_LINEAR_V1", "regnet_y_128gf_lc_swag-cbe8ce12.pth", 644812894, (1, 1), 224, 224, "bicubic", 86.068, 97.844),
    ]),
    "shufflenet_v2_x0_5": ("ShuffleNet_V2_X0_5_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "shufflenetv2_x0.5-f707e7126e.pth", 1366792, (1, 1), 224, 256, "bilinear", 60.552, 81.746),
    ]),
    "shufflenet_v2_x1_0": ("ShuffleNet_V2_X1_0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "shufflenetv2_x1-5666bf0f80.pth", 2278604, (1, 1), 224, 256, "bilinear", 69.362, 88.316),
    ]),
    "shufflenet_v2_x1_5": ("ShuffleNet_V2_X1_5_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "shufflenetv2_x1_5-3c479a10.pth", 3503624, (1, 1), 224, 232, "bilinear", 72.996, 91.086),
    ]),
    "shufflenet_v2_x2_0": ("ShuffleNet_V2_X2_0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "shufflenetv2_x2_0-8be3c8ee.pth", 7393996, (1, 1), 224, 232, "bilinear", 76.23, 93.006),
    ]),
    "squeezenet1_0": ("SqueezeNet1_0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "squeezenet1_0-b66bff10.pth", 1248424, (21, 21), 224, 256, "bilinear", 58.092, 80.42),
    ]),
    "squeezenet1_1": ("SqueezeNet1_1_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "squeezenet1_1-b8a52dc0.pth", 1235496, (17, 17), 224, 256, "bilinear", 58.178, 80.624),
    ]),
    "swin_v2_b": ("Swin_V2_B_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_v2_b-781e5279.pth", 87930848, (256, 256), 256, 272, "bicubic", 84.112, 96.864),
    ]),
    "swin_v2_s": ("Swin_V2_S_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_v2_s-637d8ceb.pth", 49737442, (256, 256), 256, 260, "bicubic", 83.712, 96.816),
    ]),
    "swin_v2_t": ("Swin_V2_T_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_v2_t-b137f0e2.pth", 28351570, (256, 256), 256, 260, "bicubic", 82.072, 96.132),
    ]),
}
